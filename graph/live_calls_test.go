package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// The fan-out target: one updateTask delivered to 200 subscribers
// of one project, each selecting task { id title status version assignee
// { id name } }, costs at most 10 DynamoDB calls in all, the mutation
// included. The store publishes the committed change's event (with the
// task as written) through its outbox; the hub checks the 200 recipients'
// memberships once (a Query of the members beside a read of the project);
// the assignee is read once, by the event's shared loaders, for all; once
// they have resolved it, their memberships are checked again, once for all.
func TestOneUpdateFannedOutTo200SubscribersCostsAtMostTenCalls(t *testing.T) {
	const subscribers = 200
	e := testenv.New(t)
	b := e.Store.NewDataset(testenv.Now)
	owner := b.User("owner", "Owner", "")
	var members []*domain.User
	for i := range subscribers {
		members = append(members, b.User(fmt.Sprintf("sub%03d", i), fmt.Sprintf("Subscriber %d", i), ""))
	}
	p := b.Project("Board", "", owner, members...)
	task := b.Task(p, "Move me", domain.StatusTodo, nil, members[7])
	e.MustImport(t, &b.D)
	lv, srv := e.StartLive(t, pipeline.Options{Debug: true}, live.HubConfig{})

	clients := make([]*testenv.WSClient, subscribers)
	for i, m := range members {
		c, err := testenv.DialWS(t, srv, "Bearer "+e.Token(t, m.ID))
		if err != nil {
			t.Fatal(err)
		}
		c.Subscribe(t, "s", `subscription($p: ID!) { projectEvents(projectId: $p) {
		  kind task { id title status version assignee { id name } } } }`, map[string]any{"p": p.ID})
		clients[i] = c
	}
	testenv.WaitSubscribers(t, lv.Hub, p.ID, subscribers)
	e.Calls.Reset()

	// The mutation's own calls, as its response reports them (-debug): the
	// fan-out's reads run beside the answer, on the hub's context.
	raw := e.Send(t, map[string]any{"query": `mutation($id: ID!) { updateTask(input: {id: $id, status: IN_PROGRESS}) { id version } }`,
		"variables": map[string]any{"id": task.ID}}, e.As("owner"))
	var res struct {
		Errors     []testenv.Error
		Extensions struct {
			DynamoDB struct{ Calls map[string]int }
		}
	}
	if err := json.Unmarshal(raw.Body, &res); err != nil || len(res.Errors) > 0 {
		t.Fatalf("updateTask: %s", raw.Body)
	}
	mutation := res.Extensions.DynamoDB.Calls
	if len(mutation) == 0 {
		t.Fatalf("no calls reported: %s", raw.Body)
	}
	changed := *task
	changed.Version = task.Version + 1

	var wg sync.WaitGroup
	got := make([]eventData, subscribers)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			m, err := c.Read(ctx)
			if err != nil || m.Type != "next" {
				t.Errorf("subscriber %d: %s %s %v", i, m.Type, m.Payload, err)
				return
			}
			var n testenv.Next
			_ = json.Unmarshal(m.Payload, &n)
			if len(n.Errors) > 0 {
				t.Errorf("subscriber %d: %+v", i, n.Errors)
			}
			_ = json.Unmarshal(n.Data, &got[i])
		}()
	}
	wg.Wait()
	for i, g := range got {
		tk := g.ProjectEvents.Task
		if tk == nil || tk.ID != task.ID || tk.Status != "IN_PROGRESS" || tk.Version != changed.Version ||
			tk.Assignee == nil || tk.Assignee.Name != "Subscriber 7" {
			t.Fatalf("subscriber %d got %+v", i, tk)
		}
	}
	// The outbox item's delete runs in the background after the answer:
	// wait for it, so that it is always counted.
	if err := e.Store.FlushOutbox(context.Background()); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range e.Calls.ByOp() {
		total += n
	}
	t.Logf("DynamoDB calls: mutation %v (answered); in all, with the outbox delete and the fan-out, %s (%d)", mutation, e.Calls, total)
	if total > 10 {
		t.Errorf("one update fanned out to %d subscribers cost %d DynamoDB calls (%s); the target is 10", subscribers, total, e.Calls)
	}
	// Pinned exactly: the mutation's own, its outbox item's delete (one
	// BatchWriteItem, in the background: it may land in the mutation's
	// report or not), then one Query of the members, one read of the
	// project and one of the assignee (BatchGetItem), then, once the 200
	// have resolved the event, the re-check of their memberships, for all
	// of them together: one Query of the members beside one read of the
	// project (graph/subscription/deliver.go).
	if n := e.Calls.Get("BatchWriteItem"); n != 1 {
		t.Errorf("%d BatchWriteItem calls, want the outbox delete's one", n)
	}
	fanOut := e.Calls.ByOp()
	delete(fanOut, "BatchWriteItem")
	for op, n := range mutation {
		if op == "BatchWriteItem" {
			continue
		}
		if fanOut[op] -= n; fanOut[op] == 0 {
			delete(fanOut, op)
		}
	}
	if want := map[string]int{"Query": 2, "BatchGetItem": 3}; !maps.Equal(fanOut, want) {
		t.Errorf("the fan-out made calls %v (mutation %v); want %v", fanOut, mutation, want)
	}
}
