package dynamo

import (
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// Exported key functions, for tests and tools that check the table: they
// say what keys an item of each kind must have, from the API's ids
// (prj#…, tsk#…, cmt#…) or domain objects, so that a checker never builds a
// key string (or handles a ULID) by hand. The store itself uses the
// unexported functions of keys.go, which these only wrap. An id of the wrong
// form yields keys no item has.

// UserItemKey is the key of a user's profile.
func UserItemKey(userID string) (pk, sk string) { return userKey(userID).split() }

// ProjectItemKey is the key of a project's item.
func ProjectItemKey(projectID string) (pk, sk string) { return projectKey(ulidOf(projectID)).split() }

// MemberItemKey is the key of a user's membership of a project.
func MemberItemKey(projectID, userID string) (pk, sk string) {
	return memberKey(ulidOf(projectID), userID).split()
}

// MemberIndexKeys are the GSI1 keys of a membership (the user's projects).
func MemberIndexKeys(projectID, userID string) (gsi1pk, gsi1sk string) {
	return userProjectsPK(userID), userProjectsSK(ulidOf(projectID))
}

// TaskItemKey is the key of a task's item.
func TaskItemKey(taskID string) (pk, sk string) { return taskKey(ulidOf(taskID)).split() }

// TaskIndexKeys are the index keys of a task's item as its fields make them:
// GSI1 its project's tasks by due date; GSI2 its assignee's open or done
// tasks, or its project's unassigned tasks.
func TaskIndexKeys(t *domain.Task) (gsi1pk, gsi1sk, gsi2pk, gsi2sk string) { return taskIndexKeys(t) }

// TagLinkKeys are the key and GSI1 keys of the link of task t to a tag.
func TagLinkKeys(t *domain.Task, tag string) (pk, sk, gsi1pk, gsi1sk string) {
	tu := ulidOf(t.ID)
	pk, sk = tagKey(tu, tag).split()
	return pk, sk, tagTasksPK(tag, ulidOf(t.ProjectID)), dueSK(t.DueDate, tu)
}

// TagIndexEntry is where task t stands in its project's index of a tag
// (tagindex.go): the index's key, the entry's key in its map of tasks
// (attribute "tasks") and its value.
func TagIndexEntry(t *domain.Task, tag string) (pk, sk, entry, value string) {
	pk, sk = tagIndexKey(ulidOf(t.ProjectID), tag).split()
	return pk, sk, ulidOf(t.ID), entryValue(t)
}

// TagIndexUnits is what an entry (its key in the map of tasks, its value)
// counts towards its index's cap, and its attribute "entries".
func TagIndexUnits(entry, value string) int { return entryUnits(entry, value) }

// TagIndexedKey is the key of the marker of a table whose tag indexes are
// complete.
func TagIndexedKey() (pk, sk string) { return tagIndexedKey.split() }

// CommentItemKey is the key of a comment's item, from its id alone.
func CommentItemKey(commentID string) (pk, sk string) {
	t, c, _ := domain.SplitCommentID(commentID)
	return commentKey(t, c).split()
}

// IdempotencyItemKey is the key of the idempotency record of a viewer's
// mutation (the GraphQL field or alias op) sent with an idempotency key.
func IdempotencyItemKey(viewer, clientKey, op string) (pk, sk string) {
	return idemKey(viewer, clientKey, op).split()
}

// OutboxItemKey is the key of the outbox item of the event with that id,
// committed at that time.
func OutboxItemKey(eventID string, at time.Time) (pk, sk string) {
	return outboxKey(eventID, at).split()
}

func (k key) split() (string, string) { return k.PK, k.SK }

// SyncMarkItemKey is the key of user's sync mark of a project.
func SyncMarkItemKey(userID, projectID string) (pk, sk string) {
	return syncMarkKey(userID, ulidOf(projectID)).split()
}

// SyncMarkOf is the user and the project of a sync mark's key
// (syncmark.go); ok is false for a key of anything else.
func SyncMarkOf(pk, sk string) (userID, projectID string, ok bool) {
	u, isUser := strings.CutPrefix(pk, "USER#")
	pu, isMark := strings.CutPrefix(sk, markPrefix)
	if !isUser || !isMark || syncMarkKey(u, pu) != (key{pk, sk}) {
		return "", "", false
	}
	return u, domain.ProjectIDOf(pu), true
}

// ChangeItemKey is the key of the entry at position pos of a project's
// change log (changes.go).
func ChangeItemKey(projectID string, pos int64) (pk, sk string) {
	return changeKey(ulidOf(projectID), pos).split()
}

// ChangeLogOf is the project of a change log item's partition key ("" for
// another partition), and the position in its sort key (false for a
// departure).
func ChangeLogOf(pk, sk string) (projectID string, pos int64, isEntry bool) {
	pu, ok := strings.CutPrefix(pk, changesPrefix)
	if !ok {
		return "", 0, false
	}
	pos, isEntry = positionOf(sk)
	return domain.ProjectIDOf(pu), pos, isEntry
}

// DepartureItemKey is the key of the departure of a user from a project.
func DepartureItemKey(projectID, userID string) (pk, sk string) {
	return departureKey(ulidOf(projectID), userID).split()
}

// ExpiryIndexKeys are the GSI2 keys of an expiring change log item (the
// sweep's), from its key and expiry (Unix seconds).
func ExpiryIndexKeys(pk, sk string, expiresAt int64) (gsi2pk, gsi2sk string) {
	return expiryPK(key{pk, sk}), expirySK(expiresAt)
}

// ChangeLogKey is the key of the marker of a table whose change logs are
// complete.
func ChangeLogKey() (pk, sk string) { return changeLogKey.split() }

// WholeItem fills in, in place, what a task's or a comment's item holds in
// its keys and leaves out as stored (a lean item: a task's id and project
// id, a comment's id and task id), for a checker that reads the table raw
// (attribute name → value, a string for a string). It returns the
// attributes an item written before holds that disagree with its keys.
func WholeItem(it map[string]any) (disagree []string) {
	k := item{}
	for _, a := range []string{attrPK, attrSK, attrGSI1PK, attrGSI4PK} {
		if s, ok := it[a].(string); ok {
			k[a] = &types.AttributeValueMemberS{Value: s}
		}
	}
	names, values := inKeys(k)
	for i, n := range names {
		switch v, ok := it[n]; {
		case n == "":
		case !ok:
			it[n] = values[i]
		case v != values[i]:
			disagree = append(disagree, n)
		}
	}
	return disagree
}

// TagTitlesBackfill names the backfill that gives tag index entries
// written before entries carried titles their tasks' titles (tagtitles.go).
const TagTitlesBackfill = tagTitlesName

// BackfillMarkerKey is the key of the marker of the backfill name
// (backfill.go): where its place is kept, then done.
func BackfillMarkerKey(name string) (pk, sk string) { return backfillKey(name).split() }
