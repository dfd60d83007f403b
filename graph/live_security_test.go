package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// The events of a project are shown to a subscriber by the rule queries
// follow, checked when the event is resolved for them (graph/subscription/deliver.go),
// and their cost is bounded and charged per event (graph/pipeline/subscriptions.go).

// projectDataSub selects what an event can reach of its project, within
// the subscription cost limit.
const projectDataSub = `subscription($p: ID!) { projectEvents(projectId: $p) {
  kind subjectId actor { id name }
  task { id title project { id tasks(first: 10) { nodes { id title description } } } }
  comment { id body }
  project { id name tasks(first: 3) { nodes { id title description comments(first: 2) { nodes { body } } } } } } }`

// waitPending waits until a batch read waits for gate.
func waitPending(t *testing.T, gate *loaders.ReadGate) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for gate.Pending() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no read is waiting")
		}
		time.Sleep(time.Millisecond)
	}
}

// flushing opens gate: the held reads, and every later one, go on.
func flushing(t *testing.T, gate *loaders.ReadGate) {
	t.Helper()
	gate.Open()
}

// readAll reads the operation's messages up to its complete (or the end of
// the connection) and returns them.
func readAll(t *testing.T, c *testenv.WSClient) ([]testenv.WSMessage, error) {
	t.Helper()
	var msgs []testenv.WSMessage
	for {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		m, err := c.Read(ctx)
		cancel()
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
		if m.Type == "complete" || m.Type == "error" {
			return msgs, nil
		}
	}
}

// A subscriber that stops reading keeps events queued for it; resolved
// after the subscriber's removal, they showed what was created since (the
// event's task's project's tasks), which project(id) answers null for.
// Now the event is checked once resolved, and not sent: the stream ends
// with NOT_FOUND, and nothing of the project after the removal is received.
func TestLiveEventResolvedAfterTheSubscribersRemovalIsNotSent(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	// The trigger holds every read of the event until the test flushes:
	// bob's transport has taken the event and waits on its first read, as
	// a stalled subscriber's would, while bob is removed.
	gate := &loaders.ReadGate{}
	lv, srv := e.StartLive(t, pipeline.Options{Hooks: pipeline.Hooks{Loaders: loaders.Config{Gate: gate}}}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	bob := e.MustDialWS(t, srv, "bob")
	bob.Subscribe(t, "b", projectDataSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)

	task := *seed.Task("Write the landing page copy")
	publish(t, lv.Broker, domain.EventTaskUpdated, "alice", web, &task, task.ID)
	waitPending(t, gate) // bob's resolution reads the task's project

	ctx := context.Background()
	if _, err := e.Store.RemoveProjectMember(ctx, "alice", web.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	desc := "written after bob left"
	secret, err := e.Store.CreateTask(ctx, "alice", domain.TaskInput{ProjectID: web.ID, Title: "Acquisition plan", Description: &desc})
	if err != nil {
		t.Fatal(err)
	}
	flushing(t, gate) // the reads go on, after the removal and the new task
	var gone struct{ Project *struct{ ID string } }
	e.MustQuery(t, "bob", `query($p: ID!) { project(id: $p) { id } }`, map[string]any{"p": web.ID}, &gone)
	if gone.Project != nil {
		t.Fatal("bob still sees the project")
	}
	msgs, err := readAll(t, bob)
	if err != nil {
		t.Fatalf("after %d messages: %v", len(msgs), err)
	}
	for _, m := range msgs {
		if p := string(m.Payload); strings.Contains(p, secret.ID) || strings.Contains(p, "Acquisition plan") || strings.Contains(p, desc) {
			t.Errorf("bob received what was created after his removal: %s %s", m.Type, p)
		}
	}
	if len(msgs) != 2 || msgs[0].Type != "next" || msgs[1].Type != "complete" {
		for _, m := range msgs {
			t.Logf("%s %s", m.Type, m.Payload)
		}
		t.Fatalf("bob got %d messages, want one next (the end) and complete", len(msgs))
	}
	var n testenv.Next
	_ = json.Unmarshal(msgs[0].Payload, &n)
	if len(n.Errors) != 1 || n.Errors[0].Code() != "NOT_FOUND" || !testenv.NullData(n.Data) {
		t.Errorf("bob's stream ended with %s %+v, want data null and one NOT_FOUND", n.Data, n.Errors)
	}
}

type finalEvent struct {
	ProjectEvents struct {
		Kind, SubjectID string
		Actor           *struct{ ID, Name string }
		Task            *json.RawMessage
		Comment         *json.RawMessage
		Project         *json.RawMessage
	}
}

// The event that removes a subscriber is the last of their stream; it is
// resolved for them as for a non-member: no project, task or comment; the
// actor who removed them is shown.
func TestLiveRemovedMembersOwnEventShowsNoProjectData(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	bob, carol := e.MustDialWS(t, srv, "bob"), e.MustDialWS(t, srv, "carol")
	bob.Subscribe(t, "b", projectDataSub, map[string]any{"p": web.ID})
	carol.Subscribe(t, "c", projectDataSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 2)
	e.MustQuery(t, "alice", `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "bob") { id } }`, map[string]any{"p": web.ID}, nil)

	n := bob.MustNext(t, "b")
	if len(n.Errors) > 0 {
		t.Fatalf("bob: %+v", n.Errors)
	}
	var got finalEvent
	_ = json.Unmarshal(n.Data, &got)
	ev := got.ProjectEvents
	if ev.Kind != "MEMBER_REMOVED" || ev.SubjectID != "bob" || ev.Actor == nil || ev.Actor.Name != "Alice Example" {
		t.Errorf("bob got %s, want his removal by alice", n.Data)
	}
	if ev.Project != nil || ev.Task != nil || ev.Comment != nil {
		t.Errorf("bob's own removal shows the project's data: %s", n.Data)
	}
	if m := bob.MustRead(t); m.Type != "complete" {
		t.Errorf("bob then got %s %s, want complete", m.Type, m.Payload)
	}
	// A member still sees the project as the change left it.
	n = carol.MustNext(t, "c")
	got = finalEvent{}
	_ = json.Unmarshal(n.Data, &got)
	if len(n.Errors) > 0 || got.ProjectEvents.Project == nil || !strings.Contains(string(*got.ProjectEvents.Project), "Website relaunch") {
		t.Errorf("carol got %s %+v, want the project", n.Data, n.Errors)
	}
}

// An event resolved after its read budget (the event timeout, counted from
// its first resolution) ends the stream with a retryable error, never
// INTERNAL_SERVER_ERROR: on a WebSocket the 1013 close of a slow consumer,
// over server-sent events SERVICE_UNAVAILABLE saying to resume.
func TestLiveEventResolvedTooLateEndsTheStreamRetryably(t *testing.T) {
	t.Run("the budget ends while the reads wait (WebSocket)", func(t *testing.T) {
		e := testenv.New(t)
		seed := e.MustSeed(t)
		gate := &loaders.ReadGate{}
		const budget = 300 * time.Millisecond
		lv, srv := e.StartLive(t, pipeline.Options{Hooks: pipeline.Hooks{Loaders: loaders.Config{Gate: gate}}}, live.HubConfig{EventTimeout: budget})
		web := seed.Project("Website relaunch")
		bob := e.MustDialWS(t, srv, "bob")
		bob.Subscribe(t, "b", projectDataSub, map[string]any{"p": web.ID})
		testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
		task := *seed.Task("Write the landing page copy")
		publish(t, lv.Broker, domain.EventTaskUpdated, "alice", web, &task, task.ID)
		waitPending(t, gate)
		time.Sleep(budget + 100*time.Millisecond) // a slow reader: the budget ends before the reads
		flushing(t, gate)
		msgs, err := readAll(t, bob)
		for _, m := range msgs {
			if strings.Contains(string(m.Payload), "INTERNAL_SERVER_ERROR") || m.Type == "next" && !strings.Contains(string(m.Payload), "SERVICE_UNAVAILABLE") {
				t.Errorf("got %s %s, want no event", m.Type, m.Payload)
			}
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != graph.CloseTryAgainLater || !strings.Contains(ce.Reason, "cursor") {
			t.Errorf("the connection ended with %v after %d messages, want the close 1013 (resume with the last cursor)", err, len(msgs))
		}
	})
	t.Run("no budget left at all (server-sent events)", func(t *testing.T) {
		e := testenv.New(t)
		seed := e.MustSeed(t)
		lv, srv := e.StartLive(t, pipeline.Options{Limits: pipeline.Limits{EventTimeout: time.Nanosecond}}, live.HubConfig{})
		web := seed.Project("Website relaunch")
		res := testenv.MustOpenSSE(t, srv, "Bearer "+e.Token(t, "carol"), taskEventsSub, map[string]any{"p": web.ID})
		testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
		task := *seed.Task("Write the landing page copy")
		publish(t, lv.Broker, domain.EventTaskUpdated, "alice", web, &task, task.ID)
		var b strings.Builder
		sse := testenv.NewSSEReader(res.Body)
		for ev, ok := sse.Next(); ok; ev, ok = sse.Next() {
			b.WriteString(ev.Data)
			if ev.Type == "complete" {
				break
			}
		}
		body := b.String()
		if strings.Contains(body, "INTERNAL_SERVER_ERROR") || !strings.Contains(body, "SERVICE_UNAVAILABLE") || !strings.Contains(body, "after: the last cursor") ||
			strings.Contains(body, task.ID) {
			t.Errorf("the stream was %q, want only SERVICE_UNAVAILABLE saying to resume", body)
		}
	})
}

// heaviestSub returns the subscription that, within the default limits (30
// aliases, cost 100), makes the most DynamoDB calls per event: 31 pages of
// the actor's overdue tasks, each another key (asOf), each filtered by the
// viewer's memberships.
func heaviestSub() string {
	var b strings.Builder
	b.WriteString(`subscription($p: ID!) { projectEvents(projectId: $p) { kind actor { id overdueTasks(asOf: "2031-01-01", first: 1) { nodes { id } }`)
	for i := range pipeline.DefaultMaxAliases {
		fmt.Fprintf(&b, ` o%d: overdueTasks(asOf: "2030-01-%02d", first: 1) { nodes { id } }`, i, i+1)
	}
	b.WriteString(` } } }`)
	return b.String()
}

// eventCalls subscribes each of subs (viewer ids, one subscription each,
// up to 20 on one socket per viewer) with query, publishes one event of p
// by actor, reads it from every subscription and returns the DynamoDB
// calls the event cost: the hub's check, every recipient's resolution and
// the re-check once resolved.
func eventCalls(t *testing.T, e *testenv.Env, lv *testenv.Live, srv *httptest.Server, query string, p *domain.Project, actor string, subs []string) map[string]int {
	t.Helper()
	docs := make([]viewerSub, len(subs))
	for i, v := range subs {
		docs[i] = viewerSub{v, query}
	}
	return eventCallsOf(t, e, lv, srv, p, actor, docs, false)
}

// viewerSub is one subscription of eventCallsOf: its viewer and document.
type viewerSub struct{ viewer, query string }

// eventCallsOf is eventCalls with each subscription's own document;
// saturated: every processor busy (testenv.Saturate) from the event's
// publication until every subscription has it.
func eventCallsOf(t *testing.T, e *testenv.Env, lv *testenv.Live, srv *httptest.Server, p *domain.Project, actor string, subs []viewerSub, saturated bool) map[string]int {
	t.Helper()
	type sub struct {
		c  *testenv.WSClient
		id string
	}
	sockets := map[string]*testenv.WSClient{}
	var all []sub
	for i, vs := range subs {
		c := sockets[vs.viewer]
		if c == nil {
			c = e.MustDialWS(t, srv, vs.viewer)
			sockets[vs.viewer] = c
		}
		id := fmt.Sprint(i)
		c.Subscribe(t, id, vs.query, map[string]any{"p": p.ID})
		all = append(all, sub{c, id})
	}
	testenv.WaitSubscribers(t, lv.Hub, p.ID, len(subs))
	e.Calls.Reset()
	stop := func() {}
	if saturated {
		stop = testenv.Saturate(t)
	}
	publish(t, lv.Broker, domain.EventProjectUpdated, actor, p, nil, p.ID)
	// One socket's operations arrive in any order.
	for v, c := range sockets {
		n := 0
		for _, s := range all {
			if s.c == c {
				n++
			}
		}
		for range n {
			m := c.MustRead(t)
			var next testenv.Next
			_ = json.Unmarshal(m.Payload, &next)
			if m.Type != "next" || len(next.Errors) > 0 || testenv.NullData(next.Data) {
				t.Fatalf("%s got %s %s", v, m.Type, m.Payload)
			}
		}
	}
	stop()
	calls := e.Calls.ByOp()
	for _, c := range sockets {
		_ = c.Conn.CloseNow()
	}
	testenv.WaitSubscribers(t, lv.Hub, p.ID, 0)
	return calls
}

func total(calls map[string]int) int {
	n := 0
	for _, c := range calls {
		n += c
	}
	return n
}

// The bound of docs/live.md ("Fan-out cost"): within the subscription
// limits, one event costs at most MaxEventCallsPerSubscriber DynamoDB calls
// per subscriber, and one viewer's subscriptions cost what one does. The
// heaviest selection the limits allow (heaviestSub: the actor's overdue
// tasks 31 times, each another key, each filtered by the viewer's
// memberships) costs, for one subscriber: the hub's check (BatchGetItem),
// the actor (BatchGetItem), 31 pages (Query), the visibility of their tasks
// (BatchGetItem), the re-check once resolved (BatchGetItem): 35. Before,
// each subscription read its own: 20 subscriptions of one viewer cost 623.
func TestLiveHeaviestSubscriptionAllowedIsBoundedPerEventAndSharedPerViewer(t *testing.T) {
	const maxEventCallsPerSubscriber = 35
	e := testenv.New(t)
	_, p := mustBoard(t, e, 3)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	q := heaviestSub()

	one := eventCalls(t, e, lv, srv, q, p, "boss", []string{"viewer0"})
	t.Logf("one subscriber: %v (%d)", one, total(one))
	if want := map[string]int{"BatchGetItem": 4, "Query": 31}; !maps.Equal(one, want) {
		t.Errorf("one subscriber: the event cost %v, want %v", one, want)
	}
	if total(one) > maxEventCallsPerSubscriber {
		t.Errorf("one subscriber: %d calls, the bound is %d", total(one), maxEventCallsPerSubscriber)
	}

	same := make([]string, pipeline.DefaultMaxSubscriptionsPerSocket)
	for i := range same {
		same[i] = "viewer0"
	}
	shared := eventCalls(t, e, lv, srv, q, p, "boss", same)
	t.Logf("%d subscriptions of one viewer: %v (%d)", len(same), shared, total(shared))
	if !maps.Equal(shared, one) {
		t.Errorf("%d subscriptions of one viewer cost %v, want what one costs, %v", len(same), shared, one)
	}

	three := eventCalls(t, e, lv, srv, q, p, "boss", []string{"viewer0", "viewer1", "viewer2"})
	t.Logf("three viewers: %v (%d)", three, total(three))
	if n := total(three); n > 3*maxEventCallsPerSubscriber {
		t.Errorf("three viewers: %d calls (%v), the bound is %d per subscriber", n, three, maxEventCallsPerSubscriber)
	}
	if q := three["Query"]; q != 3*31 {
		t.Errorf("three viewers: %d Query calls, want 31 each", q)
	}
}

// A subscription is refused before it opens when its selection costs more
// than the subscription limit (it would cost it again for every event),
// even though a query of that cost is allowed; the limit is an option.
func TestLiveSubscriptionAboveItsCostLimitIsRefused(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	web := seed.Project("Website relaunch")
	heavy := `subscription($p: ID!) { projectEvents(projectId: $p) { project { tasks(first: 50) { nodes { id title } } } } }`
	t.Run("default", func(t *testing.T) {
		lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
		c := e.MustDialWS(t, srv, "alice")
		c.Subscribe(t, "1", heavy, map[string]any{"p": web.ID})
		m := c.MustRead(t)
		if (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), `"code":"COMPLEXITY_LIMIT_EXCEEDED"`) ||
			!strings.Contains(string(m.Payload), fmt.Sprintf("the limit of a subscription is %d", pipeline.DefaultMaxSubscriptionComplexity)) {
			t.Errorf("got %s %s, want COMPLEXITY_LIMIT_EXCEEDED naming the subscription limit", m.Type, m.Payload)
		}
		if got := lv.Hub.Subscribers(web.ID); got != 0 {
			t.Errorf("a refused subscription is held (%d)", got)
		}
		// The same selection as a query is within the query limit.
		e.MustQuery(t, "alice", `query($p: ID!) { project(id: $p) { tasks(first: 50) { nodes { id title } } } }`, map[string]any{"p": web.ID}, nil)
		// Within the limit: the subscription of the other tests.
		c.Subscribe(t, "2", heaviestSub(), map[string]any{"p": web.ID})
		testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	})
	t.Run("raised by the option", func(t *testing.T) {
		lv, srv := e.StartLive(t, pipeline.Options{Limits: pipeline.Limits{MaxSubscriptionComplexity: 1000}}, live.HubConfig{})
		c := e.MustDialWS(t, srv, "alice")
		c.Subscribe(t, "1", heavy, map[string]any{"p": web.ID})
		testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	})
}

// Every event resolved for a subscriber is charged its cost against the
// subscriber's cost bucket, as the same query would be; when the bucket is
// empty the subscription ends with RATE_LIMITED, saying when to resume.
func TestLiveEventsAreChargedToTheSubscribersCostBucket(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	// The clock stands still: no token comes back. The subscription costs
	// 2 (projectEvents and kind): 2 to open, then 2 per event; 10 in all
	// pays for the opening and 4 events.
	lv, srv := e.StartLive(t, pipeline.Options{Limits: pipeline.Limits{RateLimits: pipeline.RateLimits{RateCost: 1, RateCostBurst: 10}}}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	c := e.MustDialWS(t, srv, "bob")
	c.Subscribe(t, "1", `subscription($p: ID!) { projectEvents(projectId: $p) { kind } }`, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	task := *seed.Task("Write the landing page copy")
	for range 5 {
		publish(t, lv.Broker, domain.EventTaskUpdated, "alice", web, &task, task.ID)
	}
	for i := range 4 {
		if got := decodeEvent(t, c.MustNext(t, "1")).ProjectEvents; got.Kind != "TASK_UPDATED" {
			t.Fatalf("event %d: %+v", i, got)
		}
	}
	if msg := mustEndWith(t, c, "1", codes.RateLimited).Message; !strings.Contains(msg, "after") {
		t.Errorf("message %q does not say to resume", msg)
	}
}

// A randomized model of the rule "no delivered event carries an object the
// subscriber could not see when it was resolved": bob's transport takes
// the first event and its reads wait (the trigger) while a random sequence
// of changes runs (bob removed and added back, tasks created and changed,
// the project deleted); then the reads go on, every later event of bob's
// queue is resolved in the final state, and a sentinel event follows. If
// bob may not see the project at the end, nothing he receives carries an
// object of it: only his own removal's or the deletion's scalars, then the
// end of the stream. The model test (model_*_test.go) has no subscriptions.
func TestLiveModelEventsShowOnlyWhatTheSubscriberSeesWhenResolved(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x11fe))
			e := testenv.New(t)
			seed := e.MustSeed(t)
			gate := &loaders.ReadGate{}
			lv, srv := e.StartLive(t, pipeline.Options{Hooks: pipeline.Hooks{Loaders: loaders.Config{Gate: gate}}}, live.HubConfig{})
			web := seed.Project("Website relaunch")
			bob := e.MustDialWS(t, srv, "bob")
			bob.Subscribe(t, "b", projectDataSub, map[string]any{"p": web.ID})
			testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
			task := *seed.Task("Write the landing page copy")
			publish(t, lv.Broker, domain.EventTaskUpdated, "alice", web, &task, task.ID)
			waitPending(t, gate)

			ctx := context.Background()
			member, exists := true, true
			var ops []string
			for i := range 12 {
				if !exists {
					break
				}
				switch rng.IntN(6) {
				case 0, 1:
					if member {
						if _, err := e.Store.RemoveProjectMember(ctx, "alice", web.ID, "bob"); err != nil {
							t.Fatal(err)
						}
						member = false
						ops = append(ops, "remove bob")
					} else {
						if _, err := e.Store.AddProjectMember(ctx, "alice", web.ID, "bob"); err != nil {
							t.Fatal(err)
						}
						member = true
						ops = append(ops, "add bob")
					}
				case 2, 3:
					if _, err := e.Store.CreateTask(ctx, "alice", domain.TaskInput{ProjectID: web.ID, Title: fmt.Sprintf("Task %d", i)}); err != nil {
						t.Fatal(err)
					}
					ops = append(ops, "create a task")
				case 4:
					title := fmt.Sprintf("Copy, v%d", i)
					if _, err := e.Store.UpdateTask(ctx, "alice", dynamo.TaskPatch{ID: task.ID, Title: domain.Opt[*string]{Set: true, Value: &title}}); err != nil {
						t.Fatal(err)
					}
					ops = append(ops, "update a task")
				case 5:
					if rng.IntN(3) == 0 {
						if err := e.Store.DeleteProject(ctx, "alice", web.ID); err != nil {
							t.Fatal(err)
						}
						exists = false
						ops = append(ops, "delete the project")
					}
				}
			}
			visible := member && exists
			flushing(t, gate)
			sentinel := task
			sentinel.Title = "sentinel"
			publish(t, lv.Broker, domain.EventTaskUpdated, "alice", web, &sentinel, task.ID)
			var msgs []testenv.WSMessage
			for {
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				m, err := bob.Read(ctx)
				cancel()
				if err != nil {
					t.Fatalf("after %v, %d messages: %v", ops, len(msgs), err)
				}
				msgs = append(msgs, m)
				if m.Type != "next" || strings.Contains(string(m.Payload), `"sentinel"`) {
					break
				}
			}
			if visible {
				return // bob sees the project now: any of it may be shown
			}
			for _, m := range msgs {
				var n testenv.Next
				_ = json.Unmarshal(m.Payload, &n)
				if m.Type != "next" || testenv.NullData(n.Data) {
					continue
				}
				var ev finalEvent
				_ = json.Unmarshal(n.Data, &ev)
				k := ev.ProjectEvents
				last := k.Kind == "PROJECT_DELETED" || k.Kind == "MEMBER_REMOVED" && k.SubjectID == "bob"
				if !last || k.Project != nil || k.Task != nil || k.Comment != nil {
					t.Errorf("after %v bob may not see the project, yet received %s", ops, m.Payload)
				}
			}
			if end := msgs[len(msgs)-1]; end.Type != "complete" {
				t.Errorf("after %v: the stream went on with %s %s", ops, end.Type, end.Payload)
			}
		})
	}
}

// mustBoard imports boss's project "Board" with n viewers as members and
// 3 overdue tasks assigned to boss: the heaviest subscription's data.
func mustBoard(t *testing.T, e *testenv.Env, n int) (viewers []*domain.User, p *domain.Project) {
	t.Helper()
	b := e.Store.NewDataset(testenv.Now)
	boss := b.User("boss", "Boss", "")
	for i := range n {
		viewers = append(viewers, b.User(fmt.Sprintf("viewer%d", i), fmt.Sprintf("Viewer %d", i), ""))
	}
	p = b.Project("Board", "", boss, viewers...)
	due, _ := domain.ParseDate("2026-01-05")
	for i := range 3 {
		b.Task(p, fmt.Sprintf("Overdue %d", i), domain.StatusTodo, &due, boss)
	}
	e.MustImport(t, &b.D)
	return viewers, p
}
