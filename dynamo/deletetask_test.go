package dynamo

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// queryHook runs after, once, after the first Query whose key condition
// reads comments (a task's comments' ids).
type queryHook struct {
	API
	after func()
}

func (h *queryHook) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := h.API.Query(ctx, in, o...)
	for _, v := range in.ExpressionAttributeValues {
		if s, ok := v.(*types.AttributeValueMemberS); ok && strings.HasPrefix(s.Value, "COMMENT#") && h.after != nil {
			after := h.after
			h.after = nil
			after()
			break
		}
	}
	return out, err
}

// A comment another instance adds while a task is being deleted is in
// the task's gone entry of the change log, or the delete is tried again:
// the comments' ids are read after the project, whose seq the commit is
// conditioned on. (Read beside the task, before the other instance's
// comment, the list missed it while the task's read counted it, and a
// synced replica kept the comment of a deleted task for good:
// TestSyncProperty, once in about 300 runs.)
func TestADeletedTasksGoneEntryListsACommentAddedMeanwhile(t *testing.T) {
	f := newOutboxFixture(t, false)
	ctx := context.Background()
	other := New(f.ts.client, f.ts.Table()) // another instance: its own project locks
	other.Now = f.ts.Now
	var added *domain.Comment
	f.ts.Store.db = &queryHook{API: f.ts.Store.db, after: func() {
		var err error
		if added, err = other.AddComment(ctx, "owner", domain.CommentInput{TaskID: f.tk.ID, Body: "meanwhile"}); err != nil {
			t.Error(err)
		}
	}}
	if err := f.ts.DeleteTask(ctx, "member", f.tk.ID); err != nil {
		t.Fatal(err)
	}
	if added == nil {
		t.Fatal("no comment was added while the task was deleted: the race was not set up")
	}
	changes, _, err := f.ts.Changes(ctx, f.p.ID, 0, 1<<40, 1000)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(changes, func(c Change) bool { return c.ID == f.tk.ID })
	if i < 0 || !changes[i].Gone {
		t.Fatalf("no gone entry of the task in %+v", changes)
	}
	for _, want := range []string{f.cm.ID, added.ID} {
		if !slices.Contains(changes[i].Comments, want) {
			t.Errorf("the task's gone entry lists %v, without %s", changes[i].Comments, want)
		}
	}
}
