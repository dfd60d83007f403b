package graph

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/cost"
	"github.com/taskgraph/taskgraph/graph/exec"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestEveryListFieldIsCostedAndPrefetched holds the places a new list field
// must be named in to the schema: its size (@listSize in schema.graphqls),
// which the complexity limit charges it by (priced, which must
// price it as the directive says), and, under an object a lookup by
// id returns, its read ahead (its loader's row in graph/loaders/lists.go
// names it as under) or why it is not (the row's notAhead). A field added to schema.graphqls without them fails here,
// by name, instead of costing 1 or a round trip more unseen.
func TestEveryListFieldIsCostedAndPrefetched(t *testing.T) {
	weights := Weights()
	es := priced{exec.NewExecutableSchema(exec.Config{Resolvers: &Resolver{}}), weights}
	schema := es.Schema()
	nodes := map[string]bool{}
	for _, d := range schema.GetPossibleTypes(schema.Types["Node"]) {
		nodes[d.Name] = true
	}
	var lists []string
	prefetchers, notPrefetched := loaders.ReadAhead()
	for name, def := range schema.Types {
		if def.Kind != ast.Object || strings.HasPrefix(name, "__") || strings.HasSuffix(name, "Connection") ||
			strings.HasSuffix(name, "Edge") || name == "SyncPage" || name == "Subscription" {
			continue // a connection's own lists cost what the field that returns it says
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") || !isList(schema, f.Type) {
				continue
			}
			field := name + "." + f.Name
			lists = append(lists, field)
			costedAsDirected(t, es, weights.Field(name, f.Name), name, f)
			if !nodes[name] {
				continue
			}
			ahead := slices.Contains(prefetchers, field)
			why, not := notPrefetched[field]
			switch {
			case ahead && not:
				t.Errorf("%s is both read ahead and in notPrefetched (%q)", field, why)
			case !ahead && !not:
				t.Errorf("%s is a list under an object looked up by id: name it as the under of its loader's row (graph/loaders/lists.go), read ahead, or say why not in the row's notAhead", field)
			}
		}
	}
	for _, field := range prefetchers {
		if !slices.Contains(lists, field) {
			t.Errorf("prefetchers reads ahead %s, which is no list field of the schema", field)
		}
	}
	for field := range notPrefetched {
		if !slices.Contains(lists, field) {
			t.Errorf("notPrefetched names %s, which is no list field of the schema", field)
		}
	}
	// A list's assumed size is the most it can hold, so that the estimate
	// bounds the actual cost.
	if got := weights.Field("Project", "members").Assumed; got != dynamo.MaxMembers {
		t.Errorf("Project.members: @listSize(assumedSize: %d), but a project has up to %d members", got, dynamo.MaxMembers)
	}
	if got := weights.Field("Task", "tags").Assumed; got != domain.MaxTagsOnTask {
		t.Errorf("Task.tags: @listSize(assumedSize: %d), but a task has up to %d tags", got, domain.MaxTagsOnTask)
	}
	// The check could fail: the schema has the lists the walk-through names.
	for _, want := range []string{"User.projects", "Project.tasks", "Task.comments", "Query.tasksByTag", "Project.members"} {
		if !slices.Contains(lists, want) {
			t.Errorf("%s not found among the schema's lists %v", want, lists)
		}
	}
}

// isList reports whether a field's type is a list or a connection.
func isList(schema *ast.Schema, typ *ast.Type) bool {
	return typ.Elem != nil || strings.HasSuffix(typ.Name(), "Connection") && schema.Types[typ.Name()] != nil
}

// costedAsDirected checks that the list field f of typ has @listSize and
// that the complexity limit prices it as the directive says (a sync page
// at least so: syncer.Cost), with and without its slicing arguments.
func costedAsDirected(t *testing.T, es graphql.ExecutableSchema, c cost.Field, typ string, f *ast.FieldDefinition) {
	t.Helper()
	field := typ + "." + f.Name
	if !c.List {
		t.Errorf("%s is a list without @listSize: give it one in schema.graphqls (slicingArguments or assumedSize)", field)
		return
	}
	for _, args := range []map[string]any{{}, {"first": 7}, {"last": 3}, {"first": 500}} {
		want := c.Estimate(13, c.Size(func(name string) (int, bool) {
			v, ok := args[name].(int)
			if !ok && name == "first" && args["last"] == nil && f.Arguments.ForName("first") != nil {
				return loaders.PageSize(nil, nil), true // first's default
			}
			return v, ok
		}, dynamo.MaxFirst))
		got, ok := es.Complexity(context.Background(), typ, f.Name, 13, args)
		switch {
		case !ok:
			t.Errorf("%s has @listSize but no price (priced, graph/complexity.go)", field)
			return
		case field == "Query.sync" && got < want, field != "Query.sync" && got != want:
			t.Errorf("%s with %v costs %d in the complexity limit, %d by its directives", field, args, got, want)
		}
	}
}
