package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

const taskEventsSub = `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) {
  cursor kind projectId subjectId at actor { id name } task { id title status version assignee { id name } } } }`

var eventIDs atomic.Int64

// publish records a hand-made event of a task's change as the store's
// outbox would, and returns it.
func publish(t *testing.T, b *live.Broker, kind dynamo.EventKind, actor string, p *dynamo.Project, task *dynamo.Task, subject string) *dynamo.Event {
	t.Helper()
	ev := &dynamo.Event{ID: fmt.Sprintf("test-%d-%s", eventIDs.Add(1), ulid.Make()), Kind: kind, ProjectID: p.ID,
		SubjectID: subject, ActorID: actor, At: testenv.Now, Task: task}
	if kind == dynamo.EventMemberAdded || kind == dynamo.EventMemberRemoved || kind == dynamo.EventProjectUpdated {
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
	seed := e.MustSeed()
	lv, srv := e.StartLive(graph.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	c, err := testenv.DialWS(t, srv, "Bearer "+e.Token("bob"))
	if err != nil {
		t.Fatal(err)
	}
	c.Subscribe("1", taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)

	task := *seed.Task("Write the landing page copy")
	task.Title, task.Version = "Landing page copy, v2", task.Version+1
	publish(t, lv.Broker, dynamo.EventTaskUpdated, "alice", web, &task, task.ID)

	got := decodeEvent(t, c.MustNext("1")).ProjectEvents
	if got.Kind != "TASK_UPDATED" || got.ProjectID != web.ID || got.SubjectID != task.ID || got.Actor.Name != "Alice Example" {
		t.Errorf("event = %+v", got)
	}
	if got.Task == nil || got.Task.Title != "Landing page copy, v2" || got.Task.Version != task.Version ||
		got.Task.Assignee == nil || got.Task.Assignee.ID != "alice" {
		t.Errorf("task = %+v, want the event's own task with its assignee", got.Task)
	}
	if seq, err := live.ParseCursor(web.ID, got.Cursor); err != nil || seq == 0 {
		t.Errorf("cursor %q: %d, %v", got.Cursor, seq, err)
	}
}

func TestSubscribingToAProjectOfWhichOneIsNoMemberIsNotFound(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed()
	lv, srv := e.StartLive(graph.Options{}, live.HubConfig{})
	lab := seed.Project("Research")
	for name, project := range map[string]string{"not a member": lab.ID, "no such project": "prj#" + ulid.Make().String()} {
		t.Run(name, func(t *testing.T) {
			c, err := testenv.DialWS(t, srv, "Bearer "+e.Token("alice"))
			if err != nil {
				t.Fatal(err)
			}
			c.Subscribe("1", taskEventsSub, map[string]any{"p": project})
			n := c.MustNext("1")
			if len(n.Errors) != 1 || n.Errors[0].Code() != "NOT_FOUND" || !testenv.NullData(n.Data) {
				t.Errorf("got %s %+v, want data null and one NOT_FOUND", n.Data, n.Errors)
			}
			if m := c.MustRead(); m.Type != "complete" {
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
	seed := e.MustSeed()
	lv, srv := e.StartLive(graph.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	bob, err := testenv.DialWS(t, srv, "Bearer "+e.Token("bob"))
	if err != nil {
		t.Fatal(err)
	}
	carol, err := testenv.DialWS(t, srv, "Bearer "+e.Token("carol"))
	if err != nil {
		t.Fatal(err)
	}
	bob.Subscribe("b", taskEventsSub, map[string]any{"p": web.ID})
	carol.Subscribe("c", taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 2)

	e.MustQuery("alice", `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "bob") { id } }`, map[string]any{"p": web.ID}, nil)
	publish(t, lv.Broker, dynamo.EventMemberRemoved, "alice", web, nil, "bob")
	task := *seed.Task("Write the landing page copy")
	publish(t, lv.Broker, dynamo.EventTaskUpdated, "alice", web, &task, task.ID)

	if got := decodeEvent(t, bob.MustNext("b")).ProjectEvents; got.Kind != "MEMBER_REMOVED" || got.SubjectID != "bob" {
		t.Errorf("bob got %+v, want his removal", got)
	}
	if m := bob.MustRead(); m.Type != "complete" || m.ID != "b" {
		t.Errorf("bob then got %s %s, want complete", m.Type, m.Payload)
	}
	for _, kind := range []string{"MEMBER_REMOVED", "TASK_UPDATED"} {
		if got := decodeEvent(t, carol.MustNext("c")).ProjectEvents; got.Kind != kind {
			t.Errorf("carol got %s, want %s", got.Kind, kind)
		}
	}
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
}

func TestSubscriptionOverServerSentEvents(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed()
	lv, srv := e.StartLive(graph.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	body, _ := json.Marshal(map[string]any{"query": taskEventsSub, "variables": map[string]any{"p": web.ID}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+e.Token("carol"))
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", res.StatusCode, ct)
	}
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	task := *seed.Task("Fix the broken signup form")
	task.Status = dynamo.StatusDone
	publish(t, lv.Broker, dynamo.EventTaskUpdated, "bob", web, &task, task.ID)

	sc := bufio.NewScanner(res.Body)
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok && event == "next" {
			data = v
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
