package graph_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/exec"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/vektah/gqlparser/v2/ast"
)

// What an answer cost (graph/pipeline/cost.go): the estimate the limits
// charge before an operation runs (requestedQueryCost) is at least the
// same measure of what it did (actualQueryCost), for every operation of
// the clients and for random queries.

// clientOperation is one operation of clients/operations with variables
// that work on the seeded data.
type clientOperation struct {
	name string
	vars map[string]any
}

// clientOperations are every operation of clients/operations (the
// persisted-documents manifest), queries first, in an order that works on
// the seeded data, as alice.
func clientOperations(t *testing.T, e *testenv.Env) []clientOperation {
	t.Helper()
	s := e.Seed(t)
	web, t1, t2, t7 := s.Project("Website relaunch"), s.Task("Write the landing page copy"),
		s.Task("Fix the broken signup form"), s.Task("Crash on start on Android 12")
	return []clientOperation{
		{"Dashboard", nil},
		{"CommentThread", map[string]any{"task": t7.ID, "last": 3}},
		{"ProjectBoard", map[string]any{"id": web.ID}},
		{"ProjectTasks", map[string]any{"id": web.ID, "first": 2}},
		{"ProjectTasks", map[string]any{"id": web.ID, "last": 4}},
		{"TagPage", map[string]any{"id": "tag#urgent"}},
		{"TasksByTag", map[string]any{"tag": "urgent", "first": 20}},
		{"UpdateProfile", map[string]any{"name": "Alice A.", "email": "alice@example.com"}},
		{"CreateProject", map[string]any{"name": "Costs", "description": "measured"}},
		{"CreateTask", map[string]any{"projectId": web.ID, "title": "Price it", "assigneeId": "bob", "tags": []string{"copy"}}},
		{"MoveTask", map[string]any{"id": t1.ID, "status": "DONE", "expectedVersion": t1.Version}},
		{"EditTask", map[string]any{"input": map[string]any{"id": t1.ID, "title": "Write the copy", "tags": []string{"copy", "web"}}}},
		{"AddMember", map[string]any{"projectId": web.ID, "userId": "dave"}},
		{"RemoveMember", map[string]any{"projectId": web.ID, "userId": "dave"}},
		{"DeleteTask", map[string]any{"id": t2.ID}},
	}
}

func TestEstimateBoundsActualOnClientOperations(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	_, docs := testenv.Manifest(t, "../clients/ts/src/gql/persisted-documents.json")
	ran := map[string]bool{}
	for _, op := range clientOperations(t, e) {
		doc := docs[op.name]
		if doc == "" {
			t.Fatalf("no operation %s in the manifest", op.name)
		}
		ran[op.name] = true
		res := e.Query(t, "alice", doc, op.vars)
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %+v", op.name, res.Errors)
		}
		c := res.MustCost(t)
		t.Logf("%s %v: requested %d, actual %d", op.name, op.vars, c.RequestedQueryCost, c.ActualQueryCost)
		if c.ActualQueryCost <= 0 || c.RequestedQueryCost < c.ActualQueryCost {
			t.Errorf("%s: requested %d, actual %d: want 0 < actual <= requested", op.name, c.RequestedQueryCost, c.ActualQueryCost)
		}
	}
	for name := range docs {
		if !ran[name] {
			t.Errorf("clients/operations' %s was not run: give it variables in clientOperations", name)
		}
	}
}

// The actual cost counts what ran: the dashboard of a viewer with more
// tasks costs more, and never more than its estimate, which is the same
// for both (it depends on the document alone).
func TestActualCostFollowsTheData(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	alice := e.Query(t, "alice", testenv.Dashboard, nil).MustCost(t)
	eve := e.Query(t, "eve", testenv.Dashboard, nil).MustCost(t)
	if alice.RequestedQueryCost != eve.RequestedQueryCost {
		t.Errorf("the same document estimated %d and %d", alice.RequestedQueryCost, eve.RequestedQueryCost)
	}
	// eve is in no project: me, projects, nodes (and their plumbing) only.
	if eve.ActualQueryCost != 3 || alice.ActualQueryCost <= eve.ActualQueryCost || alice.ActualQueryCost > alice.RequestedQueryCost {
		t.Errorf("actual cost: eve %d (want 3: me, projects, nodes), alice %d (want more, at most %d)",
			eve.ActualQueryCost, alice.ActualQueryCost, alice.RequestedQueryCost)
	}
}

// A corpus of random valid queries (a fixed seed: the same corpus every
// run) over the seeded data, as each seeded user: every answer carries its
// cost, and its estimate bounds its actual cost.
func TestEstimateBoundsActualOnRandomQueries(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	g := &queryGen{r: rand.New(rand.NewPCG(41, 2026)), schema: exec.NewExecutableSchema(exec.Config{}).Schema(),
		ids: map[string][]string{"User": {"alice", "bob", "carol", "dave", "eve", "nobody"}, "Tag": {"tag#urgent", "tag#copy", "tag#none"}}}
	for _, p := range s.Projects {
		g.ids["Project"] = append(g.ids["Project"], p.ID)
	}
	for _, tk := range s.Tasks {
		g.ids["Task"] = append(g.ids["Task"], tk.ID)
	}
	for _, c := range s.Comments {
		g.ids["Comment"] = append(g.ids["Comment"], c.ID)
	}
	weights := graph.Weights()
	viewers := []string{"alice", "bob", "carol", "dave", "eve"}
	answered, listed := 0, 0
	for i := range 300 {
		q := g.query()
		viewer := viewers[i%len(viewers)]
		res := e.Query(t, viewer, q, nil)
		c := res.MustCost(t)
		if c.RequestedQueryCost < c.ActualQueryCost || c.ActualQueryCost < 0 {
			t.Errorf("query %d as %s: requested %d < actual %d\n%s", i, viewer, c.RequestedQueryCost, c.ActualQueryCost, q)
		}
		if len(res.Errors) == 0 {
			answered++
		}
		if c.ActualQueryCost > 10 {
			listed++
		}
	}
	// The corpus proves something: most queries ran, and many read lists.
	if answered < 200 || listed < 100 {
		t.Errorf("%d of 300 queries answered without errors, %d cost more than 10: the corpus proves too little", answered, listed)
	}
	if len(weights.Lists()) < 9 {
		t.Errorf("the schema's lists with @listSize: %v", weights.Lists())
	}
}

// queryGen writes random valid queries from the schema: random fields of
// each object, a page of 1-5 of each connection (first or last), an id of
// the right type (or one that names nothing) for each lookup, inline
// fragments on the types of an interface, at most maxDepth levels.
type queryGen struct {
	r      *rand.Rand
	schema *ast.Schema
	ids    map[string][]string // by type
}

const maxDepth = 5

func (g *queryGen) query() string {
	var b strings.Builder
	b.WriteString("query {")
	g.fields(&b, g.schema.Query, 0)
	b.WriteString("}")
	return b.String()
}

// fields writes a non-empty selection of def's fields.
func (g *queryGen) fields(b *strings.Builder, def *ast.Definition, depth int) {
	if def.Kind == ast.Interface {
		b.WriteString(" __typename")
		for _, p := range g.schema.GetPossibleTypes(def) {
			if g.r.IntN(2) == 0 {
				fmt.Fprintf(b, " ... on %s {", p.Name)
				g.fields(b, p, depth)
				b.WriteString("}")
			}
		}
		return
	}
	var scalars, objects []*ast.FieldDefinition
	for _, f := range def.Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		if k := g.schema.Types[f.Type.Name()].Kind; k == ast.Scalar || k == ast.Enum {
			scalars = append(scalars, f)
		} else if depth < maxDepth {
			objects = append(objects, f)
		}
	}
	picked := 0
	for _, f := range append(slices.Clone(scalars), objects...) {
		if g.r.IntN(3) != 0 {
			continue
		}
		args, ok := g.args(f)
		if !ok {
			continue
		}
		picked++
		fmt.Fprintf(b, " %s%s", f.Name, args)
		if t := g.schema.Types[f.Type.Name()]; t.Kind != ast.Scalar && t.Kind != ast.Enum {
			b.WriteString(" {")
			g.fields(b, t, depth+1)
			b.WriteString("}")
		}
	}
	if picked == 0 && len(scalars) > 0 {
		fmt.Fprintf(b, " %s", scalars[0].Name)
	} else if picked == 0 {
		b.WriteString(" __typename")
	}
}

// args writes f's arguments: every required one, and a page size; false
// when a required one cannot be made.
func (g *queryGen) args(f *ast.FieldDefinition) (string, bool) {
	var parts []string
	for _, a := range f.Arguments {
		switch {
		case a.Name == "first" && g.r.IntN(4) != 0 && !slices.ContainsFunc(parts, func(p string) bool { return strings.HasPrefix(p, "last") }):
			parts = append(parts, fmt.Sprintf("first: %d", 1+g.r.IntN(5)))
		case a.Name == "last" && g.r.IntN(4) == 0 && !slices.ContainsFunc(parts, func(p string) bool { return strings.HasPrefix(p, "first") }):
			parts = append(parts, fmt.Sprintf("last: %d", 1+g.r.IntN(5)))
		case a.Name == "status" && g.r.IntN(3) == 0:
			parts = append(parts, "status: "+[]string{"TODO", "IN_PROGRESS", "DONE"}[g.r.IntN(3)])
		case a.Type.NonNull && a.Name == "tag":
			parts = append(parts, fmt.Sprintf("tag: %q", []string{"urgent", "copy", "design", "none"}[g.r.IntN(4)]))
		case a.Type.NonNull && a.Type.Name() == "ID":
			typ := map[string]string{"user": "User", "project": "Project", "task": "Task"}[f.Name]
			if typ == "" { // node: any type's
				typ = []string{"User", "Project", "Task", "Comment", "Tag"}[g.r.IntN(5)]
			}
			ids := g.ids[typ]
			parts = append(parts, fmt.Sprintf("%s: %q", a.Name, ids[g.r.IntN(len(ids))]))
		case a.Type.NonNull:
			return "", false
		}
	}
	if len(parts) == 0 {
		return "", true
	}
	return "(" + strings.Join(parts, ", ") + ")", true
}

// extensions.cost's read and write units are the capacity DynamoDB
// reported for the operation's own calls, as this test's SDK middleware
// counts it (capture: every call, its output's ConsumedCapacity), for the
// screens and every kind of mutation, on DynamoDB Local (which reports
// capacity for every call, transactions included).
func TestCostUnitsAreWhatDynamoDBReported(t *testing.T) {
	e, c := captureEnv(t, testenv.DynamoDBLocal, pipeline.Options{})
	e.MustSeed(t)
	s := e.Seed(t)
	app, web := s.Project("Mobile app"), s.Project("Website relaunch")
	comment := s.Comments[5] // alice's first update on the Android crash
	list := append(screens(t, e),
		screen{"UpdateProject", `mutation($id: ID!) { updateProject(input: { id: $id, name: "Relaunch" }) { id name } }`, map[string]any{"id": web.ID}},
		screen{"AddMember", `mutation($p: ID!) { addProjectMember(projectId: $p, userId: "dave") { id members { role } } }`, map[string]any{"p": web.ID}},
		screen{"RemoveMember", `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "dave") { id } }`, map[string]any{"p": web.ID}},
		screen{"DeleteComment", `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": comment.ID}},
		screen{"LeaveProject", `mutation($p: ID!) { leaveProject(projectId: $p) }`, map[string]any{"p": app.ID}},
		screen{"DeleteProject", `mutation($p: ID!) { deleteProject(id: $p) }`, map[string]any{"p": web.ID}},
	)
	for _, sc := range list {
		c.take()
		res := mustRun(t, e, sc)
		var read, write float64
		for _, call := range c.take() {
			if call.inRequest {
				r, w := client.ConsumedUnits(call.op, call.out)
				read, write = read+r, write+w
			}
		}
		got := res.MustCost(t)
		t.Logf("%s: %v RCU, %v WCU; cost %d of %d", sc.name, got.ReadUnits, got.WriteUnits, got.ActualQueryCost, got.RequestedQueryCost)
		mutation := sc.name != "Dashboard" && sc.name != "TasksByTag"
		switch {
		case got.ReadUnits != read || got.WriteUnits != write:
			t.Errorf("%s: extensions.cost says %v RCU, %v WCU; DynamoDB reported %v, %v", sc.name, got.ReadUnits, got.WriteUnits, read, write)
		case !mutation && (read <= 0 || write != 0), mutation && write <= 0:
			t.Errorf("%s: %v RCU, %v WCU: a query reads and writes nothing, a mutation writes", sc.name, read, write)
		case got.RequestedQueryCost < got.ActualQueryCost || got.ActualQueryCost <= 0:
			t.Errorf("%s: requested %d, actual %d", sc.name, got.RequestedQueryCost, got.ActualQueryCost)
		}
	}
}

// An answer with errors says what it cost too, wherever the operation got
// as far as its complexity: a field's error (the rest ran), a refusal by
// the complexity limit (nothing ran: its estimate), a refusal by the cost
// rate limit (nothing ran: the budget to wait for); an operation that
// failed validation was never priced.
func TestErrorAnswersSayWhatTheyCost(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	fieldError := e.Query(t, "alice", `{ me { name projects(first: 500) { nodes { name } } } }`, nil)
	if c := fieldError.MustCost(t); len(fieldError.Errors) == 0 || c.ActualQueryCost < 2 || c.ReadUnits <= 0 || c.RequestedQueryCost < c.ActualQueryCost {
		t.Errorf("a field's error: errors %+v, cost %+v; want the rest's cost and its reads", fieldError.Errors, c)
	}
	limited := e.NewHandler(pipeline.Options{Limits: pipeline.Limits{ComplexityLimit: 50,
		RateLimits: pipeline.RateLimits{RateCost: 0.001, RateCostBurst: 40}}}) // no refill to speak of
	send := func(q string) *testenv.Response {
		return e.Send(t, map[string]any{"query": q}, e.As("alice"), testenv.Via(limited)).Decode(t)
	}
	tooDear := send(testenv.Dashboard)
	if c := tooDear.MustCost(t); tooDear.Codes()[0] != codes.Complexity || c.RequestedQueryCost <= 50 || c.ActualQueryCost != 0 || c.ReadUnits != 0 {
		t.Errorf("over the complexity limit: %v, cost %+v; want its estimate, nothing run", tooDear.Codes(), c)
	}
	const q = `{ me { projects(first: 1) { nodes { name } } } }`
	var last *testenv.Response
	for range 20 {
		if last = send(q); len(last.Errors) > 0 {
			break
		}
	}
	c := last.MustCost(t)
	if last.Codes()[0] != codes.RateLimited || c.ActualQueryCost != 0 || c.ThrottleStatus == nil ||
		c.ThrottleStatus.CurrentlyAvailable >= c.RequestedQueryCost || c.ThrottleStatus.MaximumAvailable != 40 {
		t.Errorf("over the cost rate limit: %v, cost %+v; want the budget, less than the estimate, nothing run", last.Codes(), c)
	}
	if invalid := e.Query(t, "alice", `{ me { nope } }`, nil); invalid.Extensions.Cost != nil {
		t.Errorf("an invalid document was priced: %+v", invalid.Extensions.Cost)
	}
}
