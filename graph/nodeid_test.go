package graph_test

import (
	"os"
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// Relay keys its store by id alone and relay-compiler adds id to every
// selection of a type that has one: an object type with an id field that
// is no Node (a Tombstone naming a task, say) would overwrite the record of
// the object whose id it carries. So only Node types have a field named id.
func TestOnlyNodeTypesHaveAnIDField(t *testing.T) {
	src, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	schema, gqlErr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(src)})
	if gqlErr != nil {
		t.Fatal(gqlErr)
	}
	checked := 0
	for name, def := range schema.Types {
		if def.Kind != ast.Object || def.BuiltIn || def.Fields.ForName("id") == nil {
			continue
		}
		checked++
		if !slices.Contains(def.Interfaces, "Node") {
			t.Errorf("type %s has a field id but does not implement Node: Relay would key it as the object whose id it holds", name)
		}
	}
	if checked < 5 { // User, Project, Task, Comment, Tag at least
		t.Fatalf("only %d object types with an id field found: the schema was not read as expected", checked)
	}
	if ts := schema.Types["Tombstone"]; ts == nil || ts.Fields.ForName("nodeId") == nil {
		t.Error("Tombstone names its object with nodeId (sync.graphqls)")
	}
}
