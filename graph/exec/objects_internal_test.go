package exec

import (
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// TestEveryObjectTypeCanBeDeferred holds objects to the schema: every
// object type but the root types has its Object (a task on an object of a
// type without one would not start), named for its type, refusing nil and
// any other type's value (what each takes, and how it resolves, the
// differential test of the corpus shows).
func TestEveryObjectTypeCanBeDeferred(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	var want []string
	for name, def := range schema.Types {
		if def.Kind == ast.Object && !def.BuiltIn && name != "Query" && name != "Mutation" && name != "Subscription" {
			want = append(want, name)
		}
	}
	var got []string
	for name, k := range objects {
		got = append(got, name)
		if k.Name != name {
			t.Errorf("the Object of %s is named %s", name, k.Name)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("objects %v, want the schema's object types %v", got, want)
	}
	for name, k := range objects {
		if _, ok := k.value(nil); ok {
			t.Errorf("%s takes nil", name)
		}
		if _, ok := k.value(struct{}{}); ok {
			t.Errorf("%s takes a value of another type", name)
		}
		if k.exec == nil || k.child(&executionContext{}) == nil {
			t.Errorf("%s: no execution or no field contexts", name)
		}
	}
}
