package dynamo

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// The outbox's item: an event as it waits in the table for its
// publication, its snapshots stored as the items of their objects.

// outboxItem is an event waiting for its publication (outbox.go). The event
// itself is in the attribute "payload" (outboxToItem adds it), a map: its
// scalar fields (eventItem) and its snapshots under "task", "comment" and
// "project", each the item its object is stored as (taskToItem,
// commentToItem, projectToItem), so one encoder serves both. ExpiresAt
// (TTLAttribute) is a backstop: the sweep deletes what it publishes.
type outboxItem struct {
	PK        string
	SK        string
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

// eventItem is the scalar part of an outbox item's payload.
type eventItem struct {
	ID        string `dynamodbav:"id"`
	Kind      string `dynamodbav:"kind"`
	ProjectID string `dynamodbav:"projectId"`
	SubjectID string `dynamodbav:"subjectId"`
	ActorID   string `dynamodbav:"actorId"`
	At        string `dynamodbav:"at"`
}

// The payload attributes that hold an event's snapshots.
const (
	payloadTask    = "task"
	payloadComment = "comment"
	payloadProject = "project"
)

func outboxToItem(ev *domain.Event, expires time.Time) item {
	k := outboxKey(ev.ID, ev.At)
	pl := marshal(eventItem{ID: ev.ID, Kind: string(ev.Kind), ProjectID: ev.ProjectID, SubjectID: ev.SubjectID,
		ActorID: ev.ActorID, At: fmtTime(ev.At)})
	if ev.Task != nil {
		pl[payloadTask] = &types.AttributeValueMemberM{Value: taskToItem(ev.Task)}
	}
	if ev.Comment != nil {
		pl[payloadComment] = &types.AttributeValueMemberM{Value: commentToItem(ev.Comment)}
	}
	if ev.Project != nil {
		pl[payloadProject] = &types.AttributeValueMemberM{Value: projectToItem(ev.Project, 0)}
	}
	it := marshal(outboxItem{PK: k.PK, SK: k.SK, Type: typeOutbox, ID: ev.ID, ExpiresAt: expires.Unix()})
	it["payload"] = &types.AttributeValueMemberM{Value: pl}
	return it
}

// outboxFromItem decodes an outbox item: its event and its expiry (Unix
// seconds).
func outboxFromItem(m item) (*domain.Event, int64, error) {
	var it struct {
		ExpiresAt int64 `dynamodbav:"expiresAt"`
	}
	if err := attributevalue.UnmarshalMap(m, &it); err != nil {
		return nil, 0, internal(err, "decoding an outbox item")
	}
	pl, ok := m["payload"].(*types.AttributeValueMemberM)
	if !ok {
		return nil, 0, internal(fmt.Errorf("outbox item %s %s has no payload", str(m, attrPK), str(m, attrSK)), "decoding an outbox item")
	}
	var e eventItem
	if err := attributevalue.UnmarshalMap(pl.Value, &e); err != nil {
		return nil, 0, internal(err, "decoding an outbox item")
	}
	ev := &domain.Event{ID: e.ID, Kind: domain.EventKind(e.Kind), ProjectID: e.ProjectID, SubjectID: e.SubjectID, ActorID: e.ActorID,
		At: parseTime(e.At)}
	snap := func(attr string) (item, bool) {
		v, ok := pl.Value[attr].(*types.AttributeValueMemberM)
		if !ok {
			return nil, false
		}
		return v.Value, true
	}
	var err error
	if v, ok := snap(payloadTask); ok && err == nil {
		ev.Task, err = decodeAs[*domain.Task](v)
	}
	if v, ok := snap(payloadComment); ok && err == nil {
		ev.Comment, err = decodeAs[*domain.Comment](v)
	}
	if v, ok := snap(payloadProject); ok && err == nil {
		ev.Project, err = decodeAs[*domain.Project](v)
	}
	if err != nil {
		return nil, 0, err
	}
	return ev, it.ExpiresAt, nil
}

// fnv32 is the FNV-1a hash of s (outboxShard, expiryPK).
func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}
