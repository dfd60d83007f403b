package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// recSink is an EventSink that records what it is given and fails while
// fail is set.
type recSink struct {
	mu     sync.Mutex
	fail   bool
	calls  int
	got    []*domain.Event // published
	tried  []*domain.Event // every call, failed ones included
	onCall func(ctx context.Context)
}

var errBrokerDown = errors.New("broker down")

func (r *recSink) Publish(ctx context.Context, ev *domain.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.onCall != nil {
		r.onCall(ctx)
	}
	r.calls++
	r.tried = append(r.tried, ev)
	if r.fail {
		return errBrokerDown
	}
	r.got = append(r.got, ev)
	return nil
}

func (r *recSink) setFail(f bool) { r.mu.Lock(); r.fail = f; r.mu.Unlock() }

func (r *recSink) snapshot() (calls int, got, tried []*domain.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls, append([]*domain.Event(nil), r.got...), append([]*domain.Event(nil), r.tried...)
}

// outboxFixture is a store with events on and a small project: owner,
// member, outsider (no member), project p, task tk (tagged, assigned to
// member, due), comment cm by member on tk.
type outboxFixture struct {
	ts   *testStore
	sink *recSink
	p    *domain.Project
	tk   *domain.Task
	cm   *domain.Comment
}

func newOutboxFixture(t *testing.T, events bool) *outboxFixture {
	t.Helper()
	ts := newTestStore(t)
	b := ts.NewDataset(storeTestNow)
	owner := b.User("owner", "Owner", "")
	member := b.User("member", "Member", "")
	b.User("outsider", "Outsider", "")
	p := b.Project("P", "the project", owner, member)
	due := domain.DateOf(storeTestNow).AddDays(3)
	tk := b.Task(p, "Task", domain.StatusTodo, &due, member, "red", "blue")
	cm := b.Comment(tk, member, "a comment")
	ts.mustImport(t, &b.D)
	f := &outboxFixture{ts: ts, sink: &recSink{}, p: p, tk: tk, cm: cm}
	if events {
		ts.Events = f.sink
	}
	t.Cleanup(func() { _ = ts.FlushOutbox(context.Background()) })
	return f
}

func (f *outboxFixture) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.ts.FlushOutbox(ctx); err != nil {
		t.Fatalf("flushing the outbox deletes: %v", err)
	}
}

// outboxItems returns the table's outbox items.
func (ts *testStore) outboxItems(t *testing.T) []item {
	t.Helper()
	var out []item
	p := dynamodb.NewScanPaginator(ts.client, &dynamodb.ScanInput{TableName: aws.String(ts.Table())})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scanning: %v", err)
		}
		for _, it := range page.Items {
			if str(it, "type") == typeOutbox || strings.HasPrefix(str(it, attrPK), outboxPrefix) {
				out = append(out, it)
			}
		}
	}
	return out
}

// eventCase is one mutation and the event it must yield.
type eventCase struct {
	name string
	do   func(ctx context.Context, f *outboxFixture) (any, error)
	want func(f *outboxFixture, res any) domain.Event // ID left out; At is the test clock
	// check looks at the snapshots beyond their ids.
	check func(t *testing.T, f *outboxFixture, res any, ev *domain.Event)
}

var eventCases = []eventCase{
	{"updateProject yields PROJECT_UPDATED with the project as changed", func(ctx context.Context, f *outboxFixture) (any, error) {
		return f.ts.UpdateProject(ctx, "owner", ProjectPatch{ID: f.p.ID, Name: Some(aws.String("Renamed"))})
	}, func(f *outboxFixture, _ any) domain.Event {
		return domain.Event{Kind: domain.EventProjectUpdated, ProjectID: f.p.ID, SubjectID: f.p.ID, ActorID: "owner"}
	}, func(t *testing.T, f *outboxFixture, res any, ev *domain.Event) {
		if ev.Project == nil || ev.Project.ID != f.p.ID || ev.Project.Name != "Renamed" || aws.ToString(ev.Project.Description) != "the project" {
			t.Errorf("project snapshot %s, want the renamed project", show(ev.Project))
		}
	}},
	{"deleteProject yields PROJECT_DELETED without snapshots", func(ctx context.Context, f *outboxFixture) (any, error) {
		return nil, f.ts.DeleteProject(ctx, "owner", f.p.ID)
	}, func(f *outboxFixture, _ any) domain.Event {
		return domain.Event{Kind: domain.EventProjectDeleted, ProjectID: f.p.ID, SubjectID: f.p.ID, ActorID: "owner"}
	}, nil},
	{"addProjectMember yields MEMBER_ADDED about the new member with the project", func(ctx context.Context, f *outboxFixture) (any, error) {
		return f.ts.AddProjectMember(ctx, "owner", f.p.ID, "outsider")
	}, func(f *outboxFixture, _ any) domain.Event {
		return domain.Event{Kind: domain.EventMemberAdded, ProjectID: f.p.ID, SubjectID: "outsider", ActorID: "owner"}
	}, func(t *testing.T, f *outboxFixture, res any, ev *domain.Event) {
		if ev.Project == nil || ev.Project.ID != f.p.ID || ev.Project.Name != "P" {
			t.Errorf("project snapshot %s, want project P", show(ev.Project))
		}
	}},
	{"removeProjectMember yields MEMBER_REMOVED about the removed member with the project", func(ctx context.Context, f *outboxFixture) (any, error) {
		return f.ts.RemoveProjectMember(ctx, "owner", f.p.ID, "member")
	}, func(f *outboxFixture, _ any) domain.Event {
		return domain.Event{Kind: domain.EventMemberRemoved, ProjectID: f.p.ID, SubjectID: "member", ActorID: "owner"}
	}, func(t *testing.T, f *outboxFixture, res any, ev *domain.Event) {
		if ev.Project == nil || ev.Project.ID != f.p.ID {
			t.Errorf("project snapshot %s, want project P", show(ev.Project))
		}
	}},
	{"createTask yields TASK_CREATED with the new task", func(ctx context.Context, f *outboxFixture) (any, error) {
		return f.ts.CreateTask(ctx, "member", domain.TaskInput{ProjectID: f.p.ID, Title: "New", Tags: []string{"x"}, AssigneeID: aws.String("owner")})
	}, func(f *outboxFixture, res any) domain.Event {
		return domain.Event{Kind: domain.EventTaskCreated, ProjectID: f.p.ID, SubjectID: res.(*domain.Task).ID, ActorID: "member"}
	}, func(t *testing.T, f *outboxFixture, res any, ev *domain.Event) {
		if !reflect.DeepEqual(ev.Task, res) {
			t.Errorf("task snapshot %s, want the created task %s", show(ev.Task), show(res))
		}
	}},
	{"updateTask yields TASK_UPDATED with the task at its new version", func(ctx context.Context, f *outboxFixture) (any, error) {
		return f.ts.UpdateTask(ctx, "member", TaskPatch{ID: f.tk.ID, Title: Some(aws.String("Moved")),
			Status: Some(ptr(domain.StatusInProgress)), AssigneeID: Some[*string](nil)})
	}, func(f *outboxFixture, _ any) domain.Event {
		return domain.Event{Kind: domain.EventTaskUpdated, ProjectID: f.p.ID, SubjectID: f.tk.ID, ActorID: "member"}
	}, func(t *testing.T, f *outboxFixture, res any, ev *domain.Event) {
		if ev.Task == nil || ev.Task.Version != f.tk.Version+1 || ev.Task.Title != "Moved" || ev.Task.Status != domain.StatusInProgress ||
			ev.Task.AssigneeID != nil || !reflect.DeepEqual(ev.Task, res) {
			t.Errorf("task snapshot %s, want the updated task %s at version %d", show(ev.Task), show(res), f.tk.Version+1)
		}
	}},
	{"deleteTask yields TASK_DELETED without snapshots", func(ctx context.Context, f *outboxFixture) (any, error) {
		return nil, f.ts.DeleteTask(ctx, "member", f.tk.ID)
	}, func(f *outboxFixture, _ any) domain.Event {
		return domain.Event{Kind: domain.EventTaskDeleted, ProjectID: f.p.ID, SubjectID: f.tk.ID, ActorID: "member"}
	}, nil},
	{"addComment yields COMMENT_ADDED with the comment and its task", func(ctx context.Context, f *outboxFixture) (any, error) {
		return f.ts.AddComment(ctx, "owner", domain.CommentInput{TaskID: f.tk.ID, Body: "hello"})
	}, func(f *outboxFixture, res any) domain.Event {
		return domain.Event{Kind: domain.EventCommentAdded, ProjectID: f.p.ID, SubjectID: res.(*domain.Comment).ID, ActorID: "owner"}
	}, func(t *testing.T, f *outboxFixture, res any, ev *domain.Event) {
		if !reflect.DeepEqual(ev.Comment, res) {
			t.Errorf("comment snapshot %s, want %s", show(ev.Comment), show(res))
		}
		want := *f.tk // with the comment counted: the task as this change left it
		want.CommentCount++
		if !reflect.DeepEqual(ev.Task, &want) {
			t.Errorf("task snapshot %s, want the task commented on %s", show(ev.Task), show(&want))
		}
	}},
	{"deleteComment yields COMMENT_DELETED with the task", func(ctx context.Context, f *outboxFixture) (any, error) {
		return nil, f.ts.DeleteComment(ctx, "owner", f.cm.ID)
	}, func(f *outboxFixture, _ any) domain.Event {
		return domain.Event{Kind: domain.EventCommentDeleted, ProjectID: f.p.ID, SubjectID: f.cm.ID, ActorID: "owner"}
	}, func(t *testing.T, f *outboxFixture, res any, ev *domain.Event) {
		want := *f.tk // without the deleted comment
		want.CommentCount--
		if !reflect.DeepEqual(ev.Task, &want) {
			t.Errorf("task snapshot %s, want the task commented on %s", show(ev.Task), show(&want))
		}
	}},
}

var eventIDForm = regexp.MustCompile(`^[0-9a-f]{32}$`)

// checkEvent compares an event with the case's expectations.
func checkEvent(t *testing.T, c eventCase, f *outboxFixture, res any, ev *domain.Event) {
	t.Helper()
	want := c.want(f, res)
	got := domain.Event{Kind: ev.Kind, ProjectID: ev.ProjectID, SubjectID: ev.SubjectID, ActorID: ev.ActorID}
	if got != (domain.Event{Kind: want.Kind, ProjectID: want.ProjectID, SubjectID: want.SubjectID, ActorID: want.ActorID}) {
		t.Errorf("event %+v, want %+v", got, want)
	}
	if !eventIDForm.MatchString(ev.ID) {
		t.Errorf("event id %q is not a transaction token", ev.ID)
	}
	if !ev.At.Equal(storeTestNow) {
		t.Errorf("event at %v, want the commit time %v", ev.At, storeTestNow)
	}
	needTask := map[domain.EventKind]bool{domain.EventTaskCreated: true, domain.EventTaskUpdated: true, domain.EventCommentAdded: true, domain.EventCommentDeleted: true}
	needProject := map[domain.EventKind]bool{domain.EventProjectUpdated: true, domain.EventMemberAdded: true, domain.EventMemberRemoved: true}
	if (ev.Task != nil) != needTask[ev.Kind] || (ev.Comment != nil) != (ev.Kind == domain.EventCommentAdded) ||
		(ev.Project != nil) != needProject[ev.Kind] {
		t.Errorf("%s snapshots: task %v comment %v project %v", ev.Kind, ev.Task != nil, ev.Comment != nil, ev.Project != nil)
	}
	if c.check != nil {
		c.check(t, f, res, ev)
	}
}

// TestEveryMutationPublishesOneEvent proves that each mutation of a
// project, member, task or comment hands exactly one event, with the right
// kind, ids, actor, time and snapshots, to the sink and leaves no outbox
// item once the deletes are flushed.
func TestEveryMutationPublishesOneEvent(t *testing.T) {
	for _, c := range eventCases {
		t.Run(c.name, func(t *testing.T) {
			f := newOutboxFixture(t, true)
			res, err := c.do(context.Background(), f)
			if err != nil {
				t.Fatalf("mutation: %v", err)
			}
			calls, got, _ := f.sink.snapshot()
			if calls != 1 || len(got) != 1 {
				t.Fatalf("%d publish calls, %d events; want exactly one", calls, len(got))
			}
			checkEvent(t, c, f, res, got[0])
			f.flush(t)
			if its := f.ts.outboxItems(t); len(its) != 0 {
				t.Errorf("%d outbox items left after the event was published, want none", len(its))
			}
		})
	}
}

// TestSweepPublishesWhatTheSinkRefused proves, for every mutation, that a
// failed publication leaves the change committed and its outbox item in
// place, that a sweep before minAge leaves it alone, and that a later sweep
// publishes the very event (same id, same snapshots, decoded from the
// item) and empties the outbox.
func TestSweepPublishesWhatTheSinkRefused(t *testing.T) {
	ctx := context.Background()
	for _, c := range eventCases {
		t.Run(c.name, func(t *testing.T) {
			f := newOutboxFixture(t, true)
			f.sink.setFail(true)
			res, err := c.do(ctx, f)
			if err != nil {
				t.Fatalf("the mutation failed with the sink down: %v; want success (the change is committed)", err)
			}
			f.flush(t)
			_, _, tried := f.sink.snapshot()
			if len(tried) != 1 {
				t.Fatalf("%d publish attempts, want 1", len(tried))
			}
			if n := len(f.ts.outboxItems(t)); n != 1 {
				t.Fatalf("%d outbox items after a failed publication, want 1", n)
			}
			// Too young: the sweep leaves it to its mutation.
			n, err := f.ts.SweepOutbox(ctx, time.Minute)
			if calls, _, _ := f.sink.snapshot(); err != nil || n != 0 || calls != 1 {
				t.Fatalf("sweep before minAge: %d published, err %v, %d publish calls; want 0, nil, 1", n, err, calls)
			}
			// Old enough, sink still down: an error, the item stays.
			f.ts.Now = func() time.Time { return storeTestNow.Add(2 * time.Minute) }
			n, err = f.ts.SweepOutbox(ctx, time.Minute)
			if !errors.Is(err, errBrokerDown) || n != 0 || len(f.ts.outboxItems(t)) != 1 {
				t.Fatalf("sweep with the sink down: %d published, err %v; want 0, the sink's error, the item kept", n, err)
			}
			f.sink.setFail(false)
			n, err = f.ts.SweepOutbox(ctx, time.Minute)
			if err != nil || n != 1 {
				t.Fatalf("sweep: %d published, err %v; want 1, nil", n, err)
			}
			_, got, _ := f.sink.snapshot()
			if len(got) != 1 || !reflect.DeepEqual(got[0], tried[0]) {
				t.Fatalf("swept event %s\nwant the refused one %s", show(got), show(tried[0]))
			}
			checkEvent(t, c, f, res, got[0])
			if its := f.ts.outboxItems(t); len(its) != 0 {
				t.Errorf("%d outbox items after the sweep, want none", len(its))
			}
		})
	}
}

// TestSweepPublishesInCommitOrder proves that the sweep publishes the
// events of several shards oldest first.
func TestSweepPublishesInCommitOrder(t *testing.T) {
	ctx := context.Background()
	f := newOutboxFixture(t, true)
	f.sink.setFail(true)
	var want []string
	for i := range 6 {
		at := storeTestNow.Add(time.Duration(i) * time.Second)
		f.ts.Now = func() time.Time { return at }
		task, err := f.ts.CreateTask(ctx, "owner", domain.TaskInput{ProjectID: f.p.ID, Title: fmt.Sprintf("T%d", i)})
		if err != nil {
			t.Fatalf("createTask: %v", err)
		}
		want = append(want, task.ID)
	}
	_, _, tried := f.sink.snapshot()
	shards := map[string]bool{}
	for _, ev := range tried {
		pk, _ := OutboxItemKey(ev.ID, ev.At)
		shards[pk] = true
	}
	f.sink.setFail(false)
	f.ts.Now = func() time.Time { return storeTestNow.Add(time.Hour) }
	if n, err := f.ts.SweepOutbox(ctx, time.Minute); err != nil || n != 6 {
		t.Fatalf("sweep: %d published, err %v; want 6, nil", n, err)
	}
	_, got, _ := f.sink.snapshot()
	var order []string
	for _, ev := range got {
		order = append(order, ev.SubjectID)
	}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("sweep order %v, want commit order %v (events spread over %d shards)", order, want, len(shards))
	}
}

// TestSweepDropsExpiredItems proves that an event older than OutboxTTL is
// deleted without being published.
func TestSweepDropsExpiredItems(t *testing.T) {
	ctx := context.Background()
	f := newOutboxFixture(t, true)
	f.sink.setFail(true)
	if _, err := f.ts.AddComment(ctx, "owner", domain.CommentInput{TaskID: f.tk.ID, Body: "b"}); err != nil {
		t.Fatal(err)
	}
	f.sink.setFail(false)
	f.ts.Now = func() time.Time { return storeTestNow.Add(OutboxTTL + time.Hour) }
	n, err := f.ts.SweepOutbox(ctx, time.Minute)
	if calls, _, _ := f.sink.snapshot(); err != nil || n != 0 || calls != 1 {
		t.Errorf("sweep of an expired item: %d published, err %v, %d publish calls; want 0, nil, 1 (the first attempt)", n, err, calls)
	}
	if its := f.ts.outboxItems(t); len(its) != 0 {
		t.Errorf("%d outbox items left, want the expired one deleted", len(its))
	}
}

// TestFailedMutationsYieldNoEvent proves that a mutation that changes
// nothing (refused, conflicting, a no-op) calls no sink and leaves the
// table as it was, outbox included.
func TestFailedMutationsYieldNoEvent(t *testing.T) {
	cases := []struct {
		name string
		do   func(ctx context.Context, f *outboxFixture) error
		code string
	}{
		{"updateTask at a stale expected version", func(ctx context.Context, f *outboxFixture) error {
			_, err := f.ts.UpdateTask(ctx, "member", TaskPatch{ID: f.tk.ID, Title: Some(aws.String("x")), ExpectedVersion: aws.Int(f.tk.Version + 5)})
			return err
		}, domain.ECONFLICT},
		{"createTask by a non-member", func(ctx context.Context, f *outboxFixture) error {
			_, err := f.ts.CreateTask(ctx, "outsider", domain.TaskInput{ProjectID: f.p.ID, Title: "t"})
			return err
		}, domain.ENOTFOUND},
		{"createTask assigned to a non-member (a failed condition in the transaction)", func(ctx context.Context, f *outboxFixture) error {
			_, err := f.ts.CreateTask(ctx, "owner", domain.TaskInput{ProjectID: f.p.ID, Title: "t", AssigneeID: aws.String("outsider")})
			return err
		}, domain.EINVALID},
		{"updateProject with an empty name", func(ctx context.Context, f *outboxFixture) error {
			_, err := f.ts.UpdateProject(ctx, "owner", ProjectPatch{ID: f.p.ID, Name: Some(aws.String("  "))})
			return err
		}, domain.EINVALID},
		{"updateProject by a member", func(ctx context.Context, f *outboxFixture) error {
			_, err := f.ts.UpdateProject(ctx, "member", ProjectPatch{ID: f.p.ID, Name: Some(aws.String("x"))})
			return err
		}, domain.EFORBIDDEN},
		{"addProjectMember of a member again", func(ctx context.Context, f *outboxFixture) error {
			_, err := f.ts.AddProjectMember(ctx, "owner", f.p.ID, "member")
			return err
		}, ""},
		{"removeProjectMember of the owner", func(ctx context.Context, f *outboxFixture) error {
			_, err := f.ts.RemoveProjectMember(ctx, "owner", f.p.ID, "owner")
			return err
		}, domain.EINVALID},
		{"deleteComment by someone else than its author or the owner", func(ctx context.Context, f *outboxFixture) error {
			if _, err := f.ts.AddProjectMember(ctx, "owner", f.p.ID, "outsider"); err != nil {
				return err
			}
			f.sink.mu.Lock()
			f.sink.calls, f.sink.got, f.sink.tried = 0, nil, nil
			f.sink.mu.Unlock()
			return f.ts.DeleteComment(ctx, "outsider", f.cm.ID)
		}, domain.EFORBIDDEN},
		{"createProject and updateProfile (no project event)", func(ctx context.Context, f *outboxFixture) error {
			if _, err := f.ts.CreateProject(ctx, "owner", domain.ProjectInput{Name: "Q"}); err != nil {
				return err
			}
			_, err := f.ts.UpdateProfile(ctx, "owner", domain.ProfileInput{Name: "New name"})
			return err
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newOutboxFixture(t, true)
			err := c.do(context.Background(), f)
			wantCode(t, c.name, err, c.code)
			f.flush(t)
			if calls, _, _ := f.sink.snapshot(); calls != 0 {
				t.Errorf("%d publish calls, want none", calls)
			}
			if its := f.ts.outboxItems(t); len(its) != 0 {
				t.Errorf("%d outbox items, want none", len(its))
			}
		})
	}
}

// TestIdempotentReplayPublishesNothing proves that a retried mutation
// answered from its idempotency record yields no second event.
func TestIdempotentReplayPublishesNothing(t *testing.T) {
	f := newOutboxFixture(t, true)
	ctx, err := WithIdempotencyKey(context.Background(), "member", "k1", "updateTask", "digest")
	if err != nil {
		t.Fatal(err)
	}
	patch := TaskPatch{ID: f.tk.ID, Title: Some(aws.String("Once"))}
	first, err := f.ts.UpdateTask(ctx, "member", patch)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.ts.UpdateTask(ctx, "member", patch)
	if err != nil || again.Version != first.Version {
		t.Fatalf("replay: %s, %v; want the first answer at version %d", show(again), err, first.Version)
	}
	f.flush(t)
	calls, got, _ := f.sink.snapshot()
	if calls != 1 || len(got) != 1 || got[0].Task.Version != first.Version {
		t.Errorf("%d publish calls (%s), want one event of version %d", calls, show(got), first.Version)
	}
	if its := f.ts.outboxItems(t); len(its) != 0 {
		t.Errorf("%d outbox items, want none", len(its))
	}
}

// TestEventsOffWritesNoOutbox proves that without a sink no mutation writes
// an outbox item.
func TestEventsOffWritesNoOutbox(t *testing.T) {
	for _, c := range eventCases {
		t.Run(c.name, func(t *testing.T) {
			f := newOutboxFixture(t, false)
			if _, err := c.do(context.Background(), f); err != nil {
				t.Fatalf("mutation: %v", err)
			}
			if its := f.ts.outboxItems(t); len(its) != 0 || f.sink.calls != 0 {
				t.Errorf("%d outbox items, %d publish calls, want none", len(its), f.sink.calls)
			}
			if n, err := f.ts.SweepOutbox(context.Background(), 0); n != 0 || err != nil {
				t.Errorf("sweep without events: %d, %v; want 0, nil", n, err)
			}
		})
	}
}

type ctxProbe struct{}

// TestPublishOutlivesTheRequest proves that the publication runs on a
// context that keeps the request's values, has a deadline (PublishTimeout)
// and is not cancelled with the request.
func TestPublishOutlivesTheRequest(t *testing.T) {
	f := newOutboxFixture(t, true)
	f.ts.PublishTimeout = time.Hour
	reqCtx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxProbe{}, "v"))
	defer cancel()
	var value any
	var errAfterCancel error
	var deadline time.Time
	f.sink.onCall = func(ctx context.Context) {
		cancel() // the client went away while the event was being published
		value, errAfterCancel = ctx.Value(ctxProbe{}), ctx.Err()
		deadline, _ = ctx.Deadline()
	}
	if _, err := f.ts.AddComment(reqCtx, "owner", domain.CommentInput{TaskID: f.tk.ID, Body: "b"}); err != nil {
		t.Fatal(err)
	}
	if value != "v" || errAfterCancel != nil || deadline.IsZero() || time.Until(deadline) < 30*time.Minute {
		t.Errorf("publish context: value %v, err after the request's cancellation %v, deadline %v; want v, nil, about an hour away",
			value, errAfterCancel, deadline)
	}
	if _, got, _ := f.sink.snapshot(); len(got) != 1 {
		t.Errorf("%d events published, want 1", len(got))
	}
}

// TestEventCosts counts the DynamoDB calls of each mutation with events off
// and on: the outbox item rides in the mutation's own transaction, so the
// answer costs the same number of calls (updateProject's PutItem becomes a
// TransactWriteItems), and the published item's delete is one background
// BatchWriteItem at most (fewer when deletes batch up). Run with -v for the
// table.
func TestEventCosts(t *testing.T) {
	for _, c := range eventCases {
		t.Run(c.name, func(t *testing.T) {
			count := func(events bool) (answer, after map[string]int) {
				f := newOutboxFixture(t, events)
				f.ts.calls.Reset()
				// The answer's calls are those made on the mutation's
				// context; the outbox delete runs on its own, whenever
				// the scheduler lets it, and shows only in the table-wide
				// count read after the flush.
				mine := &client.Calls{}
				if _, err := c.do(client.WithObserver(context.Background(), mine), f); err != nil {
					t.Fatalf("mutation: %v", err)
				}
				f.flush(t)
				return mine.ByOp(), f.ts.calls.ByOp()
			}
			offAnswer, offAfter := count(false)
			onAnswer, onAfter := count(true)
			wantOn := offAnswer
			if offAnswer["PutItem"] > 0 {
				wantOn = map[string]int{}
				for op, n := range offAnswer {
					wantOn[op] = n
				}
				wantOn["TransactWriteItems"] += wantOn["PutItem"]
				delete(wantOn, "PutItem")
			}
			if !reflect.DeepEqual(onAnswer, wantOn) {
				t.Errorf("calls before the answer with events on %v, want %v (off: %v)", onAnswer, wantOn, offAnswer)
			}
			if !reflect.DeepEqual(offAfter, offAnswer) {
				t.Errorf("with events off, background calls %v after the answer's %v", offAfter, offAnswer)
			}
			if d := onAfter["BatchWriteItem"] - onAnswer["BatchWriteItem"]; d != 1 {
				t.Errorf("%d background BatchWriteItem calls, want 1 (the published item's delete)", d)
			}
			t.Logf("off: %v | on: %v, then in the background %d BatchWriteItem", offAnswer, onAnswer,
				onAfter["BatchWriteItem"]-onAnswer["BatchWriteItem"])
		})
	}
}

// Some is an input field given as v.
func Some[T any](v T) domain.Opt[T] { return domain.Opt[T]{Set: true, Value: v} }

// TestOutboxSurvivesExportAndImport proves that a dump carries an
// unpublished event whole: loaded into another table, its sweep publishes
// the same event.
func TestOutboxSurvivesExportAndImport(t *testing.T) {
	ctx := context.Background()
	f := newOutboxFixture(t, true)
	f.sink.setFail(true)
	if _, err := f.ts.AddComment(ctx, "owner", domain.CommentInput{TaskID: f.tk.ID, Body: "carried"}); err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	if _, err := f.ts.Export(ctx, &buf); err != nil {
		t.Fatalf("export: %v", err)
	}
	its, err := ReadDump(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatalf("reading the dump: %v", err)
	}
	other := newTestStore(t)
	if err := other.PutItems(ctx, its); err != nil {
		t.Fatalf("loading the dump: %v", err)
	}
	sink := &recSink{}
	other.Events = sink
	other.Now = func() time.Time { return storeTestNow.Add(time.Hour) }
	if n, err := other.SweepOutbox(ctx, time.Minute); err != nil || n != 1 {
		t.Fatalf("sweep of the loaded table: %d, %v; want 1, nil", n, err)
	}
	_, got, _ := sink.snapshot()
	_, _, refused := f.sink.snapshot()
	if len(got) != 1 || !reflect.DeepEqual(got[0], refused[0]) {
		t.Errorf("event after export and import %s, want %s", show(got), show(refused))
	}
}
