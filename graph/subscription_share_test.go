package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/exec"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/graph/subscription"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
	"github.com/vektah/gqlparser/v2/ast"
)

// Subscribers answered alike share one resolution and one encoding of an
// event; a selection that reads what depends on the viewer is resolved
// per viewer, and each gets their own answer.
func TestAnEventIsResolvedOncePerGroupOfSubscribersAnsweredAlike(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
	lv, srv := e.StartLive(t, pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	const shared = `subscription($p: ID!) { projectEvents(projectId: $p) { kind actor { id name } task { id title assignee { id name } } } }`
	const own = `subscription($p: ID!) { projectEvents(projectId: $p) { kind actor { id email } } }`
	viewers := []string{"alice", "bob", "carol"}
	conns := map[string]*testenv.WSClient{}
	for _, v := range viewers {
		c := e.MustDialWS(t, srv, v)
		c.Subscribe(t, "s", shared, map[string]any{"p": web.ID})
		c.Subscribe(t, "o", own, map[string]any{"p": web.ID})
		// A resumed subscription is answered like the others: after is not
		// its selection's.
		c.Subscribe(t, "r", `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) { kind actor { id name } task { id title assignee { id name } } } }`,
			map[string]any{"p": web.ID})
		conns[v] = c
	}
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 3*len(viewers))
	before := testenv.Values(testenv.Scrape(t, tel), "taskgraph_live_event_resolutions_total")[""]
	mustUpdateTask(t, e, "alice", seed.Task("Write the landing page copy").ID, `title: "Shared"`)
	payloads := map[string]map[string]string{}
	for _, v := range viewers {
		payloads[v] = map[string]string{}
		for range 3 {
			m := conns[v].MustRead(t)
			if m.Type != "next" {
				t.Fatalf("%s got %s %s", v, m.Type, m.Payload)
			}
			payloads[v][m.ID] = string(m.Payload)
		}
	}
	// The shared selection: the same bytes for everyone, both documents.
	for _, v := range viewers {
		if payloads[v]["s"] != payloads["alice"]["s"] || !strings.Contains(payloads[v]["s"], `"Shared"`) {
			t.Errorf("%s got %s, alice %s", v, payloads[v]["s"], payloads["alice"]["s"])
		}
	}
	// The email: alice's own for alice, null for the others.
	for _, v := range viewers {
		var n testenv.Next
		_ = json.Unmarshal([]byte(payloads[v]["o"]), &n)
		var d struct {
			ProjectEvents struct{ Actor struct{ Email *string } }
		}
		_ = json.Unmarshal(n.Data, &d)
		if (d.ProjectEvents.Actor.Email != nil) != (v == "alice") {
			t.Errorf("%s sees the actor's email %v", v, d.ProjectEvents.Actor.Email)
		}
	}
	// One resolution for the six shared subscriptions (two documents with
	// the same selection are two groups: 2), three for the emails.
	waitMetric(t, tel, "taskgraph_live_event_resolutions_total", "", before+2+3)
}

// Every field an event's selection can reach is either answered alike for
// every member of the project (subscription.SharedFields) or known to
// depend on the viewer: a field added to the schema must be put in one or
// the other.
func TestEveryFieldIsClassifiedForSharing(t *testing.T) {
	perViewer := map[string]string{"User": "email projects assignedTasks overdueTasks", "Tag": "tasks"}
	schema := exec.NewExecutableSchema(exec.Config{}).Schema()
	seen := map[string]bool{}
	queue := []string{"ProjectEvent"}
	for len(queue) > 0 {
		typ := queue[0]
		queue = queue[1:]
		if seen[typ] {
			continue
		}
		seen[typ] = true
		def := schema.Types[typ]
		if def == nil || def.Kind != ast.Object {
			continue
		}
		shared := map[string]bool{}
		for _, f := range subscription.SharedFields(typ) {
			shared[f] = true
		}
		for _, f := range def.Fields {
			switch {
			case strings.HasPrefix(f.Name, "__"):
			case shared[f.Name]:
				queue = append(queue, f.Type.Name())
			case strings.Contains(" "+perViewer[typ]+" ", " "+f.Name+" "):
			default:
				t.Errorf("%s.%s is neither shared among an event's recipients nor known to depend on the viewer", typ, f.Name)
			}
		}
	}
}
