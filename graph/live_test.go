package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

const taskEventsSub = `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) {
  cursor kind projectId subjectId at actor { id name } task { id title status version assignee { id name } } } }`

var eventIDs atomic.Int64

// mustUpdateTask runs updateTask as viewer with the given input fields: a
// committed change, whose event the store publishes to the Env's broker.
func mustUpdateTask(t *testing.T, e *testenv.Env, viewer, id, fields string) {
	t.Helper()
	e.MustQuery(t, viewer, `mutation($id: ID!) { updateTask(input: {id: $id, `+fields+`}) { id } }`, map[string]any{"id": id}, nil)
}

// publish records a hand-made event of a task's change straight to the
// broker, as the store's outbox does, for tests of the delivery alone
// (their Env makes no mutation, so the stream holds only these).
func publish(t *testing.T, b *live.Broker, kind domain.EventKind, actor string, p *domain.Project, task *domain.Task, subject string) *domain.Event {
	t.Helper()
	ev := &domain.Event{ID: fmt.Sprintf("test-%d-%s", eventIDs.Add(1), ulid.Make()), Kind: kind, ProjectID: p.ID,
		SubjectID: subject, ActorID: actor, At: testenv.Now, Task: task}
	if kind == domain.EventMemberAdded || kind == domain.EventMemberRemoved || kind == domain.EventProjectUpdated {
		ev.Project = p
	}
	if err := b.Publish(context.Background(), ev); err != nil {
		t.Fatalf("publishing: %v", err)
	}
	return ev
}

type eventData struct {
	ProjectEvents struct {
		Cursor    string
		Kind      string
		ProjectID string
		SubjectID string
		Actor     struct{ ID, Name string }
		Task      *struct {
			ID, Title, Status string
			Version           int
			Assignee          *struct{ ID, Name string }
		}
	}
}

func decodeEvent(t *testing.T, n testenv.Next) eventData {
	t.Helper()
	if len(n.Errors) > 0 {
		t.Fatalf("event with errors: %+v", n.Errors)
	}
	var d eventData
	if err := json.Unmarshal(n.Data, &d); err != nil {
		t.Fatalf("decoding %s: %v", n.Data, err)
	}
	return d
}

func TestSubscriptionOverWebSocketDeliversTheEventAsTheChangeLeftIt(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	c, err := testenv.DialWS(t, srv, "Bearer "+e.Token(t, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)

	task := *seed.Task("Write the landing page copy")
	task.Version++
	mustUpdateTask(t, e, "alice", task.ID, `title: "Landing page copy, v2"`)

	got := decodeEvent(t, c.MustNext(t, "1")).ProjectEvents
	if got.Kind != "TASK_UPDATED" || got.ProjectID != web.ID || got.SubjectID != task.ID || got.Actor.Name != "Alice Example" {
		t.Errorf("event = %+v", got)
	}
	if got.Task == nil || got.Task.Title != "Landing page copy, v2" || got.Task.Version != task.Version ||
		got.Task.Assignee == nil || got.Task.Assignee.ID != "alice" {
		t.Errorf("task = %+v, want the event's own task with its assignee", got.Task)
	}
	if seq, err := lv.Hub.Cursors().ParseCursor(web.ID, got.Cursor); err != nil || seq == 0 {
		t.Errorf("cursor %q: %d, %v", got.Cursor, seq, err)
	}
}

func TestSubscribingToAProjectOfWhichOneIsNoMemberIsNotFound(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	lab := seed.Project("Research")
	for name, project := range map[string]string{"not a member": lab.ID, "no such project": "prj#" + ulid.Make().String()} {
		t.Run(name, func(t *testing.T) {
			c, err := testenv.DialWS(t, srv, "Bearer "+e.Token(t, "alice"))
			if err != nil {
				t.Fatal(err)
			}
			c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": project})
			n := c.MustNext(t, "1")
			if len(n.Errors) != 1 || n.Errors[0].Code() != "NOT_FOUND" || !testenv.NullData(n.Data) {
				t.Errorf("got %s %+v, want data null and one NOT_FOUND", n.Data, n.Errors)
			}
			if m := c.MustRead(t); m.Type != "complete" {
				t.Errorf("then %s, want complete", m.Type)
			}
			if got := lv.Hub.Subscribers(project); got != 0 {
				t.Errorf("%d subscribers held", got)
			}
		})
	}
}

func TestRemovedMembersStreamEndsAfterMemberRemoved(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	bob, err := testenv.DialWS(t, srv, "Bearer "+e.Token(t, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	carol, err := testenv.DialWS(t, srv, "Bearer "+e.Token(t, "carol"))
	if err != nil {
		t.Fatal(err)
	}
	bob.Subscribe(t, "b", taskEventsSub, map[string]any{"p": web.ID})
	carol.Subscribe(t, "c", taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 2)

	e.MustQuery(t, "alice", `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "bob") { id } }`, map[string]any{"p": web.ID}, nil)
	mustUpdateTask(t, e, "alice", seed.Task("Write the landing page copy").ID, `status: DONE`)

	if got := decodeEvent(t, bob.MustNext(t, "b")).ProjectEvents; got.Kind != "MEMBER_REMOVED" || got.SubjectID != "bob" {
		t.Errorf("bob got %+v, want his removal", got)
	}
	if m := bob.MustRead(t); m.Type != "complete" || m.ID != "b" {
		t.Errorf("bob then got %s %s, want complete", m.Type, m.Payload)
	}
	for _, kind := range []string{"MEMBER_REMOVED", "TASK_UPDATED"} {
		if got := decodeEvent(t, carol.MustNext(t, "c")).ProjectEvents; got.Kind != kind {
			t.Errorf("carol got %s, want %s", got.Kind, kind)
		}
	}
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
}

func TestSubscriptionOverServerSentEvents(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	res := testenv.MustOpenSSE(t, srv, "Bearer "+e.Token(t, "carol"), taskEventsSub, map[string]any{"p": web.ID})
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", res.StatusCode, ct)
	}
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	mustUpdateTask(t, e, "bob", seed.Task("Fix the broken signup form").ID, `status: DONE`)

	var data string
	sse := testenv.NewSSEReader(res.Body)
	for ev, ok := sse.Next(); ok; ev, ok = sse.Next() {
		if ev.Type == "next" {
			data = ev.Data
			break
		}
	}
	got := decodeEvent(t, testenv.Next{Data: mustField(t, data, "data")}).ProjectEvents
	if got.Kind != "TASK_UPDATED" || got.Task == nil || got.Task.Status != "DONE" || got.Task.Assignee == nil || got.Task.Assignee.Name != "Bob Builder" {
		t.Errorf("event over SSE = %+v (data %s)", got, data)
	}
}

// mustField returns one field of a JSON object.
func mustField(t *testing.T, obj, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		t.Fatalf("decoding %q: %v", obj, err)
	}
	return m[name]
}

const testTimeout = 30 * time.Second

// mustEndWith reads a "next" carrying one error of code, then "complete".
func mustEndWith(t *testing.T, c *testenv.WSClient, id, code string) testenv.Error {
	t.Helper()
	n := c.MustNext(t, id)
	if len(n.Errors) != 1 || n.Errors[0].Code() != code || !testenv.NullData(n.Data) {
		t.Fatalf("got %s %+v, want data null and one %s", n.Data, n.Errors, code)
	}
	if m := c.MustRead(t); m.Type != "complete" || m.ID != id {
		t.Fatalf("then %s %s, want complete", m.Type, m.Payload)
	}
	return n.Errors[0]
}

func TestSubscribingWithABadCursorIsBadUserInput(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web, app := seed.Project("Website relaunch"), seed.Project("Mobile app")
	for name, cursor := range map[string]string{
		"malformed":               "bm90IGEgY3Vyc29y",
		"another project's":       lv.Hub.Cursors().Cursor(app.ID, 1),
		"beyond the stream's end": lv.Hub.Cursors().Cursor(web.ID, 1000),
	} {
		t.Run(name, func(t *testing.T) {
			c := e.MustDialWS(t, srv, "alice")
			c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web.ID, "after": cursor})
			mustEndWith(t, c, "1", "BAD_USER_INPUT")
		})
	}
}

func TestDeletingTheProjectEndsEveryStreamAfterTheEvent(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	clients := map[string]*testenv.WSClient{}
	for _, v := range []string{"alice", "bob", "carol"} {
		clients[v] = e.MustDialWS(t, srv, v)
		clients[v].Subscribe(t, v, taskEventsSub, map[string]any{"p": web.ID})
	}
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 3)
	e.MustQuery(t, "alice", `mutation($id: ID!) { deleteProject(id: $id) }`, map[string]any{"id": web.ID}, nil)
	for v, c := range clients {
		// Carol shares no other project with alice, who deleted it: the
		// last event still shows who did (graph/live.go, eventActor), and
		// nothing of the project.
		if got := decodeEvent(t, c.MustNext(t, v)).ProjectEvents; got.Kind != "PROJECT_DELETED" || got.SubjectID != web.ID ||
			got.Actor.ID != "alice" || got.Actor.Name != "Alice Example" || got.Task != nil {
			t.Errorf("%s got %+v", v, got)
		}
		if m := c.MustRead(t); m.Type != "complete" {
			t.Errorf("%s then got %s, want complete", v, m.Type)
		}
	}
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 0)
}

func TestAnExpiredTokenEndsTheConnectionsSubscriptions(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	_, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	tok, err := e.Auth.Sign("bob", time.Second) // the clock stands still; the timer runs for a second
	if err != nil {
		t.Fatal(err)
	}
	c, err := testenv.DialWS(t, srv, "Bearer "+tok)
	if err != nil {
		t.Fatal(err)
	}
	c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web.ID})
	if msg := mustEndWith(t, c, "1", "UNAUTHENTICATED").Message; !strings.Contains(msg, "expired") {
		t.Errorf("message %q does not say the token expired", msg)
	}
	// The clock of the test stands still, so the token is not expired by
	// it: a new subscription on the socket is refused only by a real
	// expiry, which the next case shows at connection_init.
	t.Run("a token already expired is refused at connection_init", func(t *testing.T) {
		old := &auth.Authenticator{Secret: []byte(testenv.Secret), Now: func() time.Time { return testenv.Now.Add(-2 * time.Hour) }}
		tok, _ := old.Sign("bob", time.Hour)
		if _, err := testenv.DialWS(t, srv, "Bearer "+tok); err == nil {
			t.Error("an expired token was accepted")
		}
	})
}

func TestSubscriptionsObeyTheQueryLimitsAndTheirOwn(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{Limits: pipeline.Limits{MaxDepth: 3, MaxSubscriptionsPerSocket: 2, MaxSubscriptionsPerViewer: 3}}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	t.Run("depth", func(t *testing.T) {
		c := e.MustDialWS(t, srv, "alice")
		c.Subscribe(t, "deep", `subscription($p: ID!) { projectEvents(projectId: $p) { task { project { owner { name } } } } }`,
			map[string]any{"p": web.ID})
		m := c.MustRead(t)
		if (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), `"code":"COMPLEXITY_LIMIT_EXCEEDED"`) {
			t.Errorf("got %s %s, want COMPLEXITY_LIMIT_EXCEEDED", m.Type, m.Payload)
		}
		if got := lv.Hub.Subscribers(web.ID); got != 0 {
			t.Errorf("a refused subscription is held (%d)", got)
		}
	})
	t.Run("per socket and per viewer", func(t *testing.T) {
		a, b := e.MustDialWS(t, srv, "bob"), e.MustDialWS(t, srv, "bob")
		a.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web.ID})
		a.Subscribe(t, "2", taskEventsSub, map[string]any{"p": web.ID})
		testenv.WaitSubscribers(t, lv.Hub, web.ID, 2)
		a.Subscribe(t, "3", taskEventsSub, map[string]any{"p": web.ID})
		if msg := mustEndWith(t, a, "3", "BAD_USER_INPUT").Message; !strings.Contains(msg, "connection") {
			t.Errorf("message %q", msg)
		}
		b.Subscribe(t, "4", taskEventsSub, map[string]any{"p": web.ID})
		testenv.WaitSubscribers(t, lv.Hub, web.ID, 3)
		b.Subscribe(t, "5", taskEventsSub, map[string]any{"p": web.ID})
		if msg := mustEndWith(t, b, "5", "BAD_USER_INPUT").Message; !strings.Contains(msg, "user") {
			t.Errorf("message %q", msg)
		}
	})
}

// The loaders of an event are shared by its recipients, but what depends on
// the viewer is each recipient's own: an assignee's email only on their own
// profile, their projects only those the recipient shares with them.
func TestEventFieldsShowEachSubscriberWhatTheyMaySee(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	q := `subscription($p: ID!) { projectEvents(projectId: $p) { task { assignee { id email projects { nodes { name } } } } } }`
	alice, carol := e.MustDialWS(t, srv, "alice"), e.MustDialWS(t, srv, "carol")
	alice.Subscribe(t, "a", q, map[string]any{"p": web.ID})
	carol.Subscribe(t, "c", q, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 2)
	task := *seed.Task("Write the landing page copy") // assigned to alice
	publish(t, lv.Broker, domain.EventTaskUpdated, "bob", web, &task, task.ID)
	type data struct {
		ProjectEvents struct {
			Task struct {
				Assignee struct {
					ID       string
					Email    *string
					Projects struct{ Nodes []struct{ Name string } }
				}
			}
		}
	}
	read := func(c *testenv.WSClient, id string) (email *string, projects []string) {
		n := c.MustNext(t, id)
		if len(n.Errors) > 0 {
			t.Fatalf("%s: %+v", id, n.Errors)
		}
		var d data
		_ = json.Unmarshal(n.Data, &d)
		for _, p := range d.ProjectEvents.Task.Assignee.Projects.Nodes {
			projects = append(projects, p.Name)
		}
		return d.ProjectEvents.Task.Assignee.Email, projects
	}
	if email, projects := read(alice, "a"); email == nil || *email != "alice@example.com" || len(projects) != 2 {
		t.Errorf("alice sees her own email %v and projects %v; want her email and both her projects", email, projects)
	}
	if email, projects := read(carol, "c"); email != nil || len(projects) != 1 || projects[0] != "Website relaunch" {
		t.Errorf("carol sees alice's email %v and projects %v; want no email and only the project they share", email, projects)
	}
}

func TestResumingOverWebSocketReplaysExactlyTheMissedEvents(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	task := *seed.Task("Set up analytics")
	c := e.MustDialWS(t, srv, "bob")
	c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	var last string
	for v := range 2 {
		task.Version = v + 10
		publish(t, lv.Broker, domain.EventTaskUpdated, "alice", web, &task, task.ID)
		last = decodeEvent(t, c.MustNext(t, "1")).ProjectEvents.Cursor
	}
	_ = c.Conn.CloseNow()
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 0)
	for v := range 3 { // missed while disconnected
		task.Version = v + 20
		publish(t, lv.Broker, domain.EventTaskUpdated, "alice", web, &task, task.ID)
	}
	c = e.MustDialWS(t, srv, "bob")
	c.Subscribe(t, "2", taskEventsSub, map[string]any{"p": web.ID, "after": last})
	for v := range 3 {
		if got := decodeEvent(t, c.MustNext(t, "2")).ProjectEvents.Task; got == nil || got.Version != v+20 {
			t.Fatalf("replayed event %d: task %+v, want version %d", v, got, v+20)
		}
	}
	task.Version = 30
	publish(t, lv.Broker, domain.EventTaskUpdated, "alice", web, &task, task.ID)
	if got := decodeEvent(t, c.MustNext(t, "2")).ProjectEvents.Task; got == nil || got.Version != 30 {
		t.Fatalf("after the replay: task %+v, want the live version 30", got)
	}
}

func TestOperationsOnAWebSocketAreRateLimited(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	// The clock stands still: no token comes back during the test.
	lv, srv := e.StartLive(t, pipeline.Options{Limits: pipeline.Limits{RateLimits: pipeline.RateLimits{RateOps: 1, RateOpsBurst: 2}}}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	c := e.MustDialWS(t, srv, "bob")
	// The socket runs its operations concurrently: whichever comes third
	// is refused.
	for _, id := range []string{"1", "2", "3"} {
		c.Subscribe(t, id, taskEventsSub, map[string]any{"p": web.ID})
	}
	m := c.MustRead(t)
	if m.Type != "next" || !strings.Contains(string(m.Payload), `"code":"RATE_LIMITED"`) {
		t.Errorf("got %s %s %s, want one operation RATE_LIMITED", m.ID, m.Type, m.Payload)
	}
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 2)
}

func TestQueriesAndMutationsRunOnAWebSocketToo(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	_, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	c := e.MustDialWS(t, srv, "alice")
	c.Subscribe(t, "q", `{ me { name projects(first: 5) { nodes { name } } } }`, nil)
	if n := c.MustNext(t, "q"); len(n.Errors) > 0 || !strings.Contains(string(n.Data), "Alice Example") || !strings.Contains(string(n.Data), "Mobile app") {
		t.Errorf("query: %s %+v", n.Data, n.Errors)
	}
	if m := c.MustRead(t); m.Type != "complete" {
		t.Errorf("after the query: %s", m.Type)
	}
	task := seed.Task("Set up analytics")
	c.Subscribe(t, "m", `mutation($id: ID!) { updateTask(input: {id: $id, title: "Analytics, v2"}) { title assignee { name } } }`,
		map[string]any{"id": task.ID})
	if n := c.MustNext(t, "m"); len(n.Errors) > 0 || !strings.Contains(string(n.Data), `"Analytics, v2"`) || !strings.Contains(string(n.Data), "Alice Example") {
		t.Errorf("mutation: %s %+v", n.Data, n.Errors)
	}
}

func TestShuttingDownEndsSubscriptionsSoThatClientsResume(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	c := e.MustDialWS(t, srv, "bob")
	c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	lv.Hub.Close()
	if msg := mustEndWith(t, c, "1", "SERVICE_UNAVAILABLE").Message; !strings.Contains(msg, "after") {
		t.Errorf("message %q does not tell the client to resume", msg)
	}
}

func TestASubscriptionOverATransportThatCannotStreamIsRefusedAtOnce(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	_, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	params := map[string]any{"query": taskEventsSub, "variables": map[string]any{"p": seed.Project("Website relaunch").ID}}
	// A guard only: before the fix, a plain POST waited for the first event.
	client := &http.Client{Timeout: 30 * time.Second}
	for _, c := range []struct {
		name, method, accept string
		status               int
		code, says           string
	}{
		{"a plain POST is BAD_USER_INPUT, 400", http.MethodPost, "application/json", http.StatusBadRequest, "BAD_USER_INPUT", "text/event-stream"},
		{"a POST accepting graphql-response+json is BAD_USER_INPUT, 400", http.MethodPost, "application/graphql-response+json", http.StatusBadRequest, "BAD_USER_INPUT", "WebSocket"},
		{"a GET is 405", http.MethodGet, "application/json", http.StatusMethodNotAllowed, "BAD_REQUEST", "POST"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := []testenv.RequestOption{testenv.To(srv.URL + "/query"), testenv.HTTPClient(client), testenv.Accept(c.accept), e.As("bob")}
			if c.method == http.MethodGet {
				opts = append(opts, testenv.GET())
			}
			res := testenv.Send(t, params, opts...).Decode(t)
			if res.Status != c.status || len(res.Errors) != 1 || res.Errors[0].Code() != c.code || !strings.Contains(res.Errors[0].Message, c.says) {
				t.Errorf("got %d %+v, want %d and one %s error saying %q", res.Status, res.Errors, c.status, c.code, c.says)
			}
		})
	}
	// And a query by plain POST is answered as ever.
	var d struct{ Me struct{ ID string } }
	e.MustQuery(t, "bob", `{ me { id } }`, nil, &d)
	if d.Me.ID != "bob" {
		t.Errorf("me: %+v, want bob", d.Me)
	}
}
