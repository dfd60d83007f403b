package ide

import (
	"os"
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// The example the IDE opens on is valid against the schema the server
// serves, and walks the seven access patterns.
func TestTheExampleIsValidAndWalksTheSevenPatterns(t *testing.T) {
	src, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	schema, gerr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(src)})
	if gerr != nil {
		t.Fatal(gerr)
	}
	doc, errs := gqlparser.LoadQuery(schema, Example)
	if len(errs) > 0 {
		t.Fatalf("the example is not valid against the schema: %v", errs)
	}
	if len(doc.Operations) != 1 || doc.Operations[0].Operation != ast.Query {
		t.Fatalf("the example has %d operations; want one query", len(doc.Operations))
	}
	// Each pattern by the object and field that reads it.
	var seen []string
	var walk func(ss ast.SelectionSet)
	walk = func(ss ast.SelectionSet) {
		for _, s := range ss {
			if f, ok := s.(*ast.Field); ok {
				seen = append(seen, f.ObjectDefinition.Name+"."+f.Name)
				walk(f.SelectionSet)
			}
		}
	}
	walk(doc.Operations[0].SelectionSet)
	for _, want := range []string{
		"Query.me", "User.email", // 1: the viewer's profile
		"User.projects",      // 2
		"Project.tasks",      // 3: by due date
		"User.assignedTasks", // 4
		"Task.comments",      // 5
		"Query.tasksByTag",   // 6
		"User.overdueTasks",  // 7
	} {
		if !slices.Contains(seen, want) {
			t.Errorf("the example does not read %s; it reads %v", want, seen)
		}
	}
}
