package graph

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/exec"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestEveryListFieldIsCostedAndPrefetched holds the places a new list field
// must be named in to the schema: its cost (setComplexity), which the
// complexity limit charges by page size, and, under an object a lookup by
// id returns, its read ahead (prefetchers) or why it is not
// (notPrefetched). A field added to schema.graphqls without them fails here,
// by name, instead of costing 1 or a round trip more unseen.
func TestEveryListFieldIsCostedAndPrefetched(t *testing.T) {
	var cfg exec.Config
	cfg.Resolvers = &Resolver{}
	setComplexity(&cfg.Complexity)
	es := exec.NewExecutableSchema(cfg)
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
			if _, ok := es.Complexity(context.Background(), name, f.Name, 1, map[string]any{}); !ok {
				t.Errorf("%s is a list without a cost: give it one in setComplexity (graph/complexity.go)", field)
			}
			if !nodes[name] {
				continue
			}
			ahead := slices.Contains(prefetchers, field)
			why, not := notPrefetched[field]
			switch {
			case ahead && not:
				t.Errorf("%s is both read ahead and in notPrefetched (%q)", field, why)
			case !ahead && !not:
				t.Errorf("%s is a list under an object looked up by id: read it ahead in prefetchers (graph/loaders/prefetch.go), or say why not in notPrefetched", field)
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
