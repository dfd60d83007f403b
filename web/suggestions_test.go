package web_test

import (
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

// A misspelt name is refused with GRAPHQL_VALIDATION_FAILED everywhere; in
// development the message suggests the name meant (introspection shows them
// all anyway), in production, where introspection is off, no message
// suggests any name, on every transport: otherwise anyone with a token could
// map the schema's arguments, enum values and input fields by misspelling
// them.
func TestProductionSuggestsNoName(t *testing.T) {
	tasks := `{ me { projects(first: 1) { nodes { tasks(status: %s) { nodes { id } } } } } }`
	cases := []struct {
		name, query string
		vars        map[string]any
		// suggests is what development's message suggests ("": none, as
		// for a variable's value, which gqlparser checks without
		// suggestions in either mode).
		suggests string
	}{
		{"an unknown argument", `{ me { projects(frst: 1) { nodes { id } } } }`, nil, `Did you mean "first"`},
		{"an unknown argument of a directive", `{ me @include(iff: true) { id } }`, nil, `Did you mean "if"`},
		{"an unknown field", `{ me { nam } }`, nil, `Did you mean "name"`},
		{"a field of a type on its interface", `{ node(id: "x") { title } }`, nil, `Did you mean to use an inline fragment on "Task"`},
		{"an unknown type", `query { me { ...F } } fragment F on Usr { id }`, nil, `Did you mean "User"`},
		{"an object without a selection", `{ me }`, nil, `Did you mean "me { ... }"`},
		{"an unknown enum value in a literal", strings.Replace(tasks, "%s", "DONEE", 1), nil, `Did you mean the enum value "DONE"`},
		{"a string for an enum in a literal", strings.Replace(tasks, "%s", `"DONE"`, 1), nil, `Did you mean the enum value "DONE"`},
		{"an unknown input field in a literal", `mutation { createProject(input: {nme: "x", name: "y"}) { id } }`, nil, `Did you mean "name"`},
		{"an unknown enum value in a variable", `query($s: TaskStatus) ` + strings.Replace(tasks, "%s", "$s", 1),
			map[string]any{"s": "DONEE"}, ""},
		{"an unknown input field in a variable", `mutation($i: CreateProjectInput!) { createProject(input: $i) { id } }`,
			map[string]any{"i": map[string]any{"nme": "x", "name": "y"}}, ""},
	}
	for _, mode := range []struct {
		name       string
		production bool
	}{{"development", false}, {"production", true}} {
		e := testenv.New(t)
		e.MustSeed(t)
		_, srv := e.StartLive(t, pipeline.Options{Production: mode.production}, live.HubConfig{})
		token := e.Token(t, "alice")
		for _, p := range web.Protocols() {
			for _, c := range cases {
				t.Run(mode.name+"/"+p+"/"+c.name, func(t *testing.T) {
					params := map[string]any{"query": c.query}
					if c.vars != nil {
						params["variables"] = c.vars
					}
					r := matrixDrivers[p].drive(t, srv, token, e.Calls.Total, op(params))[0]
					if p == web.ProtocolGET && strings.HasPrefix(c.query, "mutation") {
						// A GET refuses a mutation: 405 before validation, or
						// validation's answer, never a run.
						if r.status != 405 && r.code() != "GRAPHQL_VALIDATION_FAILED" {
							t.Fatalf("a misspelt mutation over GET: HTTP %d, %+v", r.status, r.res.Errors)
						}
						return
					}
					if len(r.res.Errors) == 0 || r.code() != "GRAPHQL_VALIDATION_FAILED" || r.calls != 0 {
						t.Fatalf("HTTP %d, close %d, %d calls, errors %+v; want GRAPHQL_VALIDATION_FAILED before any read", r.status, r.close, r.calls, r.res.Errors)
					}
					var msgs []string
					for _, e := range r.res.Errors {
						msgs = append(msgs, e.Message)
					}
					all := strings.Join(msgs, " | ")
					switch {
					case mode.production && strings.Contains(strings.ToLower(all), "did you mean"):
						t.Errorf("production suggests a name: %s", all)
					case !mode.production && c.suggests != "" && !strings.Contains(all, c.suggests):
						t.Errorf("development's message %q does not suggest %s", all, c.suggests)
					}
				})
			}
		}
	}
}
