package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// An event to more recipients than one chunk of writes (they are spread
// over the cores in chunks of 128): each member's subscription gets it
// once, with the same bytes; the subscriptions of a member removed while
// the event was resolved, wherever they fall among the chunks, get none
// of it, only their end (NOT_FOUND).
func TestLiveEventToManySubscribersReachesEachMemberOnceAndNoRemovedOne(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	gate := &loaders.ReadGate{}
	lv, srv := e.StartLive(t, pipeline.Options{
		Limits: pipeline.Limits{MaxSubscriptionsPerSocket: 100, MaxSubscriptionsPerViewer: 400},
		Hooks:  pipeline.Hooks{Loaders: loaders.Config{Gate: gate}}}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	const sub = `subscription($p: ID!) { projectEvents(projectId: $p) { kind task { id title project { id name } } } }`
	vars := map[string]any{"p": web.ID}
	var alice []*testenv.WSClient
	for range 3 {
		c := e.MustDialWS(t, srv, "alice")
		for i := range 100 {
			c.Subscribe(t, fmt.Sprint(i), sub, vars)
		}
		alice = append(alice, c)
	}
	bob := e.MustDialWS(t, srv, "bob")
	for i := range 40 {
		bob.Subscribe(t, fmt.Sprint(i), sub, vars)
	}
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 340)

	task := *seed.Task("Write the landing page copy")
	task.Title = "Seen by many"
	publish(t, lv.Broker, domain.EventTaskUpdated, "alice", web, &task, task.ID)
	waitPending(t, gate) // the event's one resolution reads
	if _, err := e.Store.RemoveProjectMember(context.Background(), "alice", web.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	flushing(t, gate)

	var payload string
	for k, c := range alice {
		got := map[string]bool{}
		for range 100 {
			m := c.MustRead(t)
			if m.Type != "next" || got[m.ID] {
				t.Fatalf("alice's socket %d: %s for %q (again: %v)", k, m.Type, m.ID, got[m.ID])
			}
			got[m.ID] = true
			if payload == "" {
				payload = string(m.Payload)
			}
			if string(m.Payload) != payload {
				t.Fatalf("alice's socket %d, %s: %s, another got %s", k, m.ID, m.Payload, payload)
			}
		}
	}
	var first testenv.Next
	if err := json.Unmarshal([]byte(payload), &first); err != nil || !json.Valid(first.Data) || len(first.Errors) > 0 ||
		!jsonContains(first.Data, "Seen by many") {
		t.Fatalf("the event: %s (%v)", payload, err)
	}
	ended := map[string]int{}
	for range 80 { // each of bob's: its end (data null, NOT_FOUND), then complete
		m := bob.MustRead(t)
		switch m.Type {
		case "next":
			var n testenv.Next
			_ = json.Unmarshal(m.Payload, &n)
			if !testenv.NullData(n.Data) || len(n.Errors) != 1 || n.Errors[0].Code() != "NOT_FOUND" {
				t.Fatalf("bob's %s got %s after his removal", m.ID, m.Payload)
			}
			ended[m.ID]++
		case "complete":
			if ended[m.ID] != 1 {
				t.Fatalf("bob's %s completed after %d ends", m.ID, ended[m.ID])
			}
		default:
			t.Fatalf("bob's %s: %s %s", m.ID, m.Type, m.Payload)
		}
	}
	if len(ended) != 40 {
		t.Errorf("%d of bob's 40 subscriptions ended", len(ended))
	}
}

func jsonContains(b json.RawMessage, s string) bool {
	q, _ := json.Marshal(s)
	return strings.Contains(string(b), string(q))
}
