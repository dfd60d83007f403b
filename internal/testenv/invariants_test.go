package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// missing is a well-formed ULID that no seeded object has.
const missing = "01ARZ3NDEKTSV4RRFFQ69G5FAV"

// checked is a seeded table with one idempotency record, and the objects
// the cases corrupt.
type checked struct {
	e       *testenv.Env
	task    *domain.Task // a task with a due date, an assignee and tags
	member  string       // a member of its project who is not its owner
	comment *domain.Comment
	idemPK  string // the record of alice's addComment, key "k1"
	idemSK  string
	// outboxPK, outboxSK: the outbox item of an updateTask whose event the
	// sink refused.
	outboxPK, outboxSK string
}

// refusingSink is an event sink that is down.
type refusingSink struct{ got []*domain.Event }

func (r *refusingSink) Publish(_ context.Context, ev *domain.Event) error {
	r.got = append(r.got, ev)
	return errors.New("down")
}

func newChecked(t *testing.T) *checked {
	t.Helper()
	e := testenv.New(t)
	seed := e.MustSeed(t)
	c := &checked{e: e}
	for _, tk := range seed.Tasks {
		if tk.DueDate != nil && tk.AssigneeID != nil && len(tk.Tags) > 0 && c.task == nil {
			c.task = tk
		}
	}
	for _, cm := range seed.Comments {
		if cm.TaskID == c.task.ID {
			c.comment = cm
		}
	}
	for _, m := range seed.Members {
		if m.ProjectID == c.task.ProjectID && m.Role == domain.RoleMember {
			c.member = m.UserID
		}
	}
	if c.comment == nil {
		c.comment = seed.Comments[0]
	}
	if c.member == "" {
		t.Fatal("the demo data has no plain member in the project of a tagged, assigned task with a due date")
	}
	// A keyed mutation leaves an idempotency record.
	rec := e.Send(t, map[string]any{"query": `mutation($id: ID!) { addComment(input: {taskId: $id, body: "keyed"}) { id } }`,
		"variables": map[string]any{"id": c.task.ID}}, e.As(*c.task.AssigneeID), testenv.Header(pipeline.IdempotencyHeader, "k1"))
	if rec.Status != http.StatusOK || strings.Contains(string(rec.Body), `"errors"`) {
		t.Fatalf("keyed addComment: %d %s", rec.Status, rec.Body)
	}
	c.idemPK, c.idemSK = dynamo.IdempotencyItemKey(*c.task.AssigneeID, "k1", "addComment")
	// An event the sink refused leaves its outbox item.
	sink := &refusingSink{}
	e.Store.Events = sink
	_, err := e.Store.UpdateTask(context.Background(), *c.task.AssigneeID, dynamo.TaskPatch{ID: c.task.ID,
		Title: domain.Opt[*string]{Set: true, Value: testenv.Ptr("evented")}})
	e.Store.Events = nil
	if err != nil || len(sink.got) != 1 {
		t.Fatalf("updateTask with the sink down: %v, %d events", err, len(sink.got))
	}
	c.outboxPK, c.outboxSK = dynamo.OutboxItemKey(sink.got[0].ID, sink.got[0].At)
	if !c.has(t, c.outboxPK, c.outboxSK) {
		t.Fatalf("no outbox item %s %s", c.outboxPK, c.outboxSK)
	}
	c.task.Title, c.task.Version = "evented", c.task.Version+1
	return c
}

func (c *checked) has(tb testing.TB, pk, sk string) bool {
	tb.Helper()
	return slices.ContainsFunc(c.e.Items(tb), func(it map[string]any) bool { return it["PK"] == pk && it["SK"] == sk })
}

func (c *checked) put(t *testing.T, attrs map[string]string) {
	t.Helper()
	it := map[string]types.AttributeValue{}
	for k, v := range attrs {
		it[k] = &types.AttributeValueMemberS{Value: v}
	}
	if _, err := c.e.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(c.e.Store.Table()), Item: it}); err != nil {
		t.Fatal(err)
	}
}

// set updates (or with the value nil removes) one attribute of an item.
func (c *checked) set(t *testing.T, pk, sk, attr string, v types.AttributeValue) {
	t.Helper()
	ctx, table := context.Background(), aws.String(c.e.Store.Table())
	k := map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk)}
	got, err := c.e.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil || got.Item == nil {
		t.Fatalf("no item %s %s to change (%v)", pk, sk, err)
	}
	// A whole put: the embedded store ignores an UpdateItem's REMOVE.
	if v == nil {
		delete(got.Item, attr)
	} else {
		got.Item[attr] = v
	}
	if _, err := c.e.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: got.Item}); err != nil {
		t.Fatal(err)
	}
}

// setEntry sets (or with the value nil removes) one entry of a tag index's
// map of tasks.
func (c *checked) setEntry(t *testing.T, pk, sk, entry string, v types.AttributeValue) {
	t.Helper()
	got, err := c.e.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(c.e.Store.Table()),
		Key: map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk)}, ConsistentRead: aws.Bool(true)})
	m, ok := got.Item["tasks"].(*types.AttributeValueMemberM)
	if err != nil || !ok {
		t.Fatalf("no tag index %s %s to change (%v)", pk, sk, err)
	}
	if v == nil {
		delete(m.Value, entry)
	} else {
		m.Value[entry] = v
	}
	c.set(t, pk, sk, "tasks", m)
}

func (c *checked) del(t *testing.T, k [2]string) {
	t.Helper()
	pk, sk := k[0], k[1]
	if !c.has(t, pk, sk) {
		t.Fatalf("no item %s %s to delete", pk, sk)
	}
	if _, err := c.e.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(c.e.Store.Table()),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}}); err != nil {
		t.Fatal(err)
	}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// numberAttr reads a number attribute of an item.
func (c *checked) numberAttr(t *testing.T, pk, sk, attr string) int64 {
	t.Helper()
	for _, it := range c.e.Items(t) {
		if it["PK"] == pk && it["SK"] == sk {
			n, err := strconv.ParseInt(fmt.Sprint(it[attr]), 10, 64)
			if err != nil {
				t.Fatalf("%s %s has no number %s: %v", pk, sk, attr, it[attr])
			}
			return n
		}
	}
	t.Fatalf("no item %s %s", pk, sk)
	return 0
}

func (c *checked) taskPK() string { pk, _ := dynamo.TaskItemKey(c.task.ID); return pk }

// syncSeq is the position of the task's entry in its project's change log.
func (c *checked) syncSeq(t *testing.T, taskID string) int64 {
	t.Helper()
	pk, sk := dynamo.TaskItemKey(taskID)
	return c.numberAttr(t, pk, sk, "syncSeq")
}

// seqOf is the seq of the task's project.
func (c *checked) seqOf(t *testing.T) int64 {
	t.Helper()
	pk, sk := dynamo.ProjectItemKey(c.task.ProjectID)
	return c.numberAttr(t, pk, sk, "seq")
}

// nextPosition raises the task's project's seq by one and returns it.
func (c *checked) nextPosition(t *testing.T) int64 {
	t.Helper()
	n := c.seqOf(t) + 1
	pk, sk := dynamo.ProjectItemKey(c.task.ProjectID)
	c.set(t, pk, sk, "seq", &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)})
	return n
}

// keyedComment is the id of the comment the keyed addComment made.
func (c *checked) keyedComment(t *testing.T) string {
	t.Helper()
	for _, it := range c.e.Items(t) {
		if it["PK"] == c.idemPK && it["SK"] == c.idemSK {
			return fmt.Sprint(it["result"])
		}
	}
	t.Fatal("no idempotency record")
	return ""
}

// ownerOf is the owner of the task's project.
func (c *checked) ownerOf(t *testing.T) string {
	t.Helper()
	pk, sk := dynamo.ProjectItemKey(c.task.ProjectID)
	for _, it := range c.e.Items(t) {
		if it["PK"] == pk && it["SK"] == sk {
			return fmt.Sprint(it["ownerId"])
		}
	}
	t.Fatal("no project")
	return ""
}

// TestCheckTableSeededTableIsClean proves that the checker's keys are the
// store's: a table the store wrote (the demo data, a keyed mutation's
// record) has no violation.
func TestCheckTableSeededTableIsClean(t *testing.T) {
	c := newChecked(t)
	if !c.has(t, c.idemPK, c.idemSK) {
		t.Fatalf("no idempotency record %s %s", c.idemPK, c.idemSK)
	}
	items := c.e.Items(t)
	kinds := map[string]int{}
	for _, it := range items {
		kinds[it["type"].(string)]++
	}
	for _, k := range []string{"USER", "PROJECT", "MEMBER", "TASK", "TAG", "COMMENT", "IDEMPOTENCY"} {
		if kinds[k] == 0 {
			t.Errorf("the seeded table has no %s item: the clean case proves nothing for it", k)
		}
	}
	if v := testenv.CheckTable(items); len(v) > 0 {
		t.Errorf("a table the store wrote has violations:\n%s", strings.Join(v, "\n"))
	}
}

// TestCheckTableCatchesCorruption corrupts one item of each kind in a fresh
// seeded table and checks that the checker reports it.
func TestCheckTableCatchesCorruption(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(t *testing.T, c *checked)
		want    string // in one of the violations
	}{
		{"task GSI1SK out of step with its due date", func(t *testing.T, c *checked) {
			moved := *c.task
			moved.DueDate = testenv.DayPtr(400)
			_, sk, _, _ := dynamo.TaskIndexKeys(&moved)
			pk, tsk := dynamo.TaskItemKey(c.task.ID)
			c.set(t, pk, tsk, "GSI1SK", s(sk))
		}, "GSI1 keys"},
		{"task GSI2 partition of another status", func(t *testing.T, c *checked) {
			done := *c.task
			done.Status = map[bool]domain.TaskStatus{true: domain.StatusTodo, false: domain.StatusDone}[c.task.Status == domain.StatusDone]
			_, _, pk2, _ := dynamo.TaskIndexKeys(&done)
			pk, sk := dynamo.TaskItemKey(c.task.ID)
			c.set(t, pk, sk, "GSI2PK", s(pk2))
		}, "GSI2 keys"},
		{"task due date no date", func(t *testing.T, c *checked) {
			pk, sk := dynamo.TaskItemKey(c.task.ID)
			c.set(t, pk, sk, "dueDate", s("tomorrow"))
		}, "is no date"},
		{"task with duplicate tags", func(t *testing.T, c *checked) {
			pk, sk := dynamo.TaskItemKey(c.task.ID)
			c.set(t, pk, sk, "tags", &types.AttributeValueMemberL{Value: []types.AttributeValue{s(c.task.Tags[0]), s(c.task.Tags[0])}})
		}, "duplicate tags"},
		{"task assigned to a non-member", func(t *testing.T, c *checked) {
			c.del(t, key(dynamo.MemberItemKey(c.task.ProjectID, *c.task.AssigneeID)))
		}, "no member of"},
		{"task of a missing project", func(t *testing.T, c *checked) {
			c.del(t, key(dynamo.ProjectItemKey(c.task.ProjectID)))
		}, "orphan task"},
		{"task without a tag link", func(t *testing.T, c *checked) {
			pk, sk, _, _ := dynamo.TagLinkKeys(c.task, c.task.Tags[0])
			c.del(t, [2]string{pk, sk})
		}, "has no tag link"},
		{"orphan tag link", func(t *testing.T, c *checked) {
			ghost := &domain.Task{ID: "tsk#" + missing, ProjectID: c.task.ProjectID}
			pk, sk, g1pk, g1sk := dynamo.TagLinkKeys(ghost, "ghost")
			c.put(t, map[string]string{"PK": pk, "SK": sk, "GSI1PK": g1pk, "GSI1SK": g1sk, "type": "TAG", "taskId": ghost.ID})
		}, "orphan tag link"},
		{"tag link without its task's tag", func(t *testing.T, c *checked) {
			pk, sk, g1pk, g1sk := dynamo.TagLinkKeys(c.task, "not-a-tag-of-it")
			c.put(t, map[string]string{"PK": pk, "SK": sk, "GSI1PK": g1pk, "GSI1SK": g1sk, "type": "TAG", "taskId": c.task.ID})
		}, "without its task's tag"},
		{"tag link GSI1SK out of step", func(t *testing.T, c *checked) {
			moved := *c.task
			moved.DueDate = testenv.DayPtr(-400)
			pk, sk, _, g1sk := dynamo.TagLinkKeys(&moved, c.task.Tags[0])
			c.set(t, pk, sk, "GSI1SK", s(g1sk))
		}, "out of step with its task"},
		{"tag link carrying its task's title", func(t *testing.T, c *checked) {
			pk, sk, _, _ := dynamo.TagLinkKeys(c.task, c.task.Tags[0])
			c.set(t, pk, sk, "title", s("an older title"))
		}, "carries title"},
		{"tag link carrying its task's version", func(t *testing.T, c *checked) {
			pk, sk, _, _ := dynamo.TagLinkKeys(c.task, c.task.Tags[0])
			c.set(t, pk, sk, "version", &types.AttributeValueMemberN{Value: "1"})
		}, "carries version"},
		{"tag link without the task's assignee", func(t *testing.T, c *checked) {
			pk, sk, _, _ := dynamo.TagLinkKeys(c.task, c.task.Tags[0])
			c.set(t, pk, sk, "assigneeId", nil)
		}, "disagrees with its task on assigneeId"},
		{"tag link with a field its task has not", func(t *testing.T, c *checked) {
			pk, sk, _, _ := dynamo.TagLinkKeys(c.task, c.task.Tags[0])
			c.set(t, pk, sk, "extra", s("x"))
		}, "carries extra"},
		{"tag index without one of its tasks", func(t *testing.T, c *checked) {
			pk, sk, entry, _ := dynamo.TagIndexEntry(c.task, c.task.Tags[0])
			c.setEntry(t, pk, sk, entry, nil)
		}, "but its tasks call for"},
		{"tag index with a stale due date", func(t *testing.T, c *checked) {
			moved := *c.task
			moved.DueDate = testenv.DayPtr(-400)
			pk, sk, entry, v := dynamo.TagIndexEntry(&moved, c.task.Tags[0])
			c.setEntry(t, pk, sk, entry, s(v))
		}, "but its tasks call for"},
		{"tag index listing a task without the tag", func(t *testing.T, c *checked) {
			ghost := &domain.Task{ID: "tsk#" + missing, ProjectID: c.task.ProjectID}
			pk, sk, entry, v := dynamo.TagIndexEntry(ghost, c.task.Tags[0])
			c.setEntry(t, pk, sk, entry, s(v))
		}, "but its tasks call for"},
		{"tag index miscounted", func(t *testing.T, c *checked) {
			pk, sk, _, _ := dynamo.TagIndexEntry(c.task, c.task.Tags[0])
			c.set(t, pk, sk, "entries", &types.AttributeValueMemberN{Value: "99"})
		}, "counts 99 units of entries"},
		{"sync mark of a project that changed since", func(t *testing.T, c *checked) {
			pk, sk := dynamo.SyncMarkItemKey("alice", c.task.ProjectID)
			c.put(t, map[string]string{"PK": pk, "SK": sk, "type": "SYNCMARK", "seq": "1"})
		}, "the mark at 1"},
		{"sync mark its project does not list", func(t *testing.T, c *checked) {
			pk, sk := dynamo.SyncMarkItemKey("alice", c.task.ProjectID)
			ppk, psk := dynamo.ProjectItemKey(c.task.ProjectID)
			var seq string
			for _, it := range c.e.Items(t) {
				if it["PK"] == ppk && it["SK"] == psk {
					seq, _ = it["seq"].(string)
				}
			}
			c.put(t, map[string]string{"PK": pk, "SK": sk, "type": "SYNCMARK", "seq": seq})
		}, "as marked"},
		{"tag index missing", func(t *testing.T, c *checked) {
			pk, sk, _, _ := dynamo.TagIndexEntry(c.task, c.task.Tags[0])
			c.del(t, [2]string{pk, sk})
		}, "no tag index"},
		{"membership without its project", func(t *testing.T, c *checked) {
			pid := "prj#" + missing
			pk, sk := dynamo.MemberItemKey(pid, "alice")
			g1pk, g1sk := dynamo.MemberIndexKeys(pid, "alice")
			c.put(t, map[string]string{"PK": pk, "SK": sk, "GSI1PK": g1pk, "GSI1SK": g1sk, "type": "MEMBER",
				"projectId": pid, "userId": "alice", "role": "MEMBER"})
		}, "orphan membership"},
		{"membership with the owner's role", func(t *testing.T, c *checked) {
			pk, sk := dynamo.MemberItemKey(c.task.ProjectID, c.member)
			c.set(t, pk, sk, "role", s("OWNER"))
		}, "role"},
		{"membership GSI1 of another user", func(t *testing.T, c *checked) {
			pk, sk := dynamo.MemberItemKey(c.task.ProjectID, *c.task.AssigneeID)
			g1pk, _ := dynamo.MemberIndexKeys(c.task.ProjectID, "eve")
			c.set(t, pk, sk, "GSI1PK", s(g1pk))
		}, "membership of"},
		{"membership of a user without a profile", func(t *testing.T, c *checked) {
			c.del(t, key(dynamo.UserItemKey(*c.task.AssigneeID)))
		}, "who has no profile"},
		{"project under another key", func(t *testing.T, c *checked) {
			pk, sk := dynamo.ProjectItemKey(c.task.ProjectID)
			c.set(t, pk, sk, "id", s("prj#"+missing))
		}, "project prj#" + missing + ": key"},
		{"orphan comment", func(t *testing.T, c *checked) {
			c.del(t, key(dynamo.TaskItemKey(c.comment.TaskID)))
		}, "orphan comment"},
		{"comment of another task", func(t *testing.T, c *checked) {
			pk, sk := dynamo.CommentItemKey(c.comment.ID)
			c.set(t, pk, sk, "taskId", s("tsk#"+missing))
		}, "no comment id of its task"},
		{"comment by an author without a profile", func(t *testing.T, c *checked) {
			pk, sk := dynamo.CommentItemKey(c.comment.ID)
			c.set(t, pk, sk, "authorId", s("nobody"))
		}, "has no profile"},
		{"idempotency record without a digest", func(t *testing.T, c *checked) {
			c.set(t, c.idemPK, c.idemSK, "digest", nil)
		}, "has no digest"},
		{"idempotency record of another op", func(t *testing.T, c *checked) {
			c.set(t, c.idemPK, c.idemSK, "op", s("deleteTask"))
		}, "op \"deleteTask\""},
		{"idempotency record with no id as result", func(t *testing.T, c *checked) {
			c.set(t, c.idemPK, c.idemSK, "result", s("42"))
		}, "is no project, task or comment id"},
		{"idempotency record without expiry", func(t *testing.T, c *checked) {
			c.set(t, c.idemPK, c.idemSK, "expiresAt", nil)
		}, "expiresAt"},
		{"outbox item without the task its kind calls for", func(t *testing.T, c *checked) {
			ctx, table := context.Background(), aws.String(c.e.Store.Table())
			got, err := c.e.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{"PK": s(c.outboxPK), "SK": s(c.outboxSK)}})
			if err != nil || got.Item == nil {
				t.Fatalf("no outbox item (%v)", err)
			}
			pl := got.Item["payload"].(*types.AttributeValueMemberM).Value
			delete(pl, "task")
			c.set(t, c.outboxPK, c.outboxSK, "payload", &types.AttributeValueMemberM{Value: pl})
		}, "task snapshot present false"},
		{"outbox item under another commit time", func(t *testing.T, c *checked) {
			ctx, table := context.Background(), aws.String(c.e.Store.Table())
			got, err := c.e.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{"PK": s(c.outboxPK), "SK": s(c.outboxSK)}})
			if err != nil || got.Item == nil {
				t.Fatalf("no outbox item (%v)", err)
			}
			got.Item["SK"] = s("2000-01-01T00:00:00.000000000Z#" + got.Item["id"].(*types.AttributeValueMemberS).Value)
			if _, err := c.e.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: got.Item}); err != nil {
				t.Fatal(err)
			}
			c.del(t, [2]string{c.outboxPK, c.outboxSK})
		}, ": key, want"},
		{"outbox item without expiry", func(t *testing.T, c *checked) {
			c.set(t, c.outboxPK, c.outboxSK, "expiresAt", nil)
		}, "expiresAt <nil>"},
		{"task's comment count one off", func(t *testing.T, c *checked) {
			pk, sk := dynamo.TaskItemKey(c.task.ID)
			// The seed's count, and the keyed comment newChecked added.
			c.set(t, pk, sk, "commentCount", &types.AttributeValueMemberN{Value: strconv.Itoa(c.task.CommentCount + 2)})
		}, "commentCount"},
		{"task without a comment count", func(t *testing.T, c *checked) {
			pk, sk := dynamo.TaskItemKey(c.task.ID)
			c.set(t, pk, sk, "commentCount", nil)
		}, "commentCount <nil>"},
		{"comment the task's count does not know", func(t *testing.T, c *checked) {
			id := "cmt#" + testenv.ULIDOf(c.task.ID) + "#" + missing
			pk, sk := dynamo.CommentItemKey(id)
			c.put(t, map[string]string{"PK": pk, "SK": sk, "type": "COMMENT", "id": id, "taskId": c.task.ID,
				"authorId": c.member, "body": "sneaked in"})
		}, "commentCount"},
		{"project's count of a status one off", func(t *testing.T, c *checked) {
			pk, sk := dynamo.ProjectItemKey(c.task.ProjectID)
			c.set(t, pk, sk, "doneCount", &types.AttributeValueMemberN{Value: "99"})
		}, "doneCount 99"},
		{"task whose status its project's counts do not know", func(t *testing.T, c *checked) {
			pk, sk := dynamo.TaskItemKey(c.task.ID)
			c.set(t, pk, sk, "status", s(map[bool]string{true: "TODO", false: "DONE"}[c.task.Status == domain.StatusDone]))
		}, "Count"},
		{"task without its entry in the change log", func(t *testing.T, c *checked) {
			c.del(t, key(dynamo.ChangeItemKey(c.task.ProjectID, c.syncSeq(t, c.task.ID))))
		}, "no live entry of it"},
		{"task whose syncSeq lies past its project's seq", func(t *testing.T, c *checked) {
			c.set(t, c.taskPK(), "TASK", "syncSeq", &types.AttributeValueMemberN{Value: "9999"})
		}, "its project's seq"},
		{"project without seq", func(t *testing.T, c *checked) {
			pk, sk := dynamo.ProjectItemKey(c.task.ProjectID)
			c.set(t, pk, sk, "seq", nil)
		}, "seq <nil>"},
		{"a second live entry of a task", func(t *testing.T, c *checked) {
			pos := c.nextPosition(t)
			pk, sk := dynamo.ChangeItemKey(c.task.ProjectID, pos)
			c.put(t, map[string]string{"PK": pk, "SK": sk, "type": "CHANGE", "id": c.task.ID, "at": "2026-08-25T12:00:00Z"})
		}, "which no object of the project records"},
		{"entry beyond its project's seq", func(t *testing.T, c *checked) {
			pk, sk := dynamo.ChangeItemKey(c.task.ProjectID, c.seqOf(t)+5)
			c.put(t, map[string]string{"PK": pk, "SK": sk, "type": "CHANGE", "id": c.task.ID, "at": "2026-08-25T12:00:00Z"})
		}, "lies beyond its project's seq"},
		{"gone entry without expiry", func(t *testing.T, c *checked) {
			c.e.MustQuery(t, *c.task.AssigneeID, `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": c.keyedComment(t)}, nil)
			pk, sk := dynamo.ChangeItemKey(c.task.ProjectID, c.seqOf(t))
			c.set(t, pk, sk, "expiresAt", nil)
		}, "gone entry"},
		{"gone entry of a comment that exists", func(t *testing.T, c *checked) {
			pos := c.nextPosition(t)
			pk, sk := dynamo.ChangeItemKey(c.task.ProjectID, pos)
			c.put(t, map[string]string{"PK": pk, "SK": sk, "type": "CHANGE", "id": c.comment.ID, "at": "2026-08-25T12:00:00Z"})
			c.set(t, pk, sk, "gone", &types.AttributeValueMemberBOOL{Value: true})
			c.set(t, pk, sk, "expiresAt", &types.AttributeValueMemberN{Value: "1790337600"})
			g2pk, g2sk := dynamo.ExpiryIndexKeys(pk, sk, 1790337600)
			c.set(t, pk, sk, "GSI2PK", s(g2pk))
			c.set(t, pk, sk, "GSI2SK", s(g2sk))
		}, "which lives on at"},
		{"departure without expiry", func(t *testing.T, c *checked) {
			owner := c.ownerOf(t)
			c.e.MustQuery(t, owner, `mutation($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { id } }`,
				map[string]any{"p": c.task.ProjectID, "u": c.member}, nil)
			pk, sk := dynamo.DepartureItemKey(c.task.ProjectID, c.member)
			c.set(t, pk, sk, "expiresAt", nil)
		}, "departure"},
		{"member entry with another start", func(t *testing.T, c *checked) {
			mpk, msk := dynamo.MemberItemKey(c.task.ProjectID, c.member)
			pk, sk := dynamo.ChangeItemKey(c.task.ProjectID, c.numberAttr(t, mpk, msk, "syncSeq"))
			c.set(t, pk, sk, "since", s("2020-01-01T00:00:00Z"))
		}, "entry since"},
		{"cleanup job left", func(t *testing.T, c *checked) {
			// Deleting a task leaves a job for the cleanup worker, which
			// does not run here.
			c.e.MustQuery(t, "alice", `mutation($id: ID!) { deleteTask(id: $id) }`, map[string]any{"id": c.task.ID}, nil)
		}, "cleanup job left"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newChecked(t)
			if v := testenv.CheckTable(c.e.Items(t)); len(v) > 0 {
				t.Fatalf("violations before the corruption:\n%s", strings.Join(v, "\n"))
			}
			tc.corrupt(t, c)
			v := testenv.CheckTable(c.e.Items(t))
			if !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("no violation mentions %q; got:\n%s", tc.want, strings.Join(v, "\n"))
			}
		})
	}
}

// key holds a key function's two results, for del.
func key(pk, sk string) [2]string { return [2]string{pk, sk} }
