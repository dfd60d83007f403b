package cost_test

import (
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/cost"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

const declarations = `
directive @cost(weight: String!) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | INPUT_FIELD_DEFINITION | OBJECT | SCALAR
directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
type Item { id: ID! }
type Items { nodes: [Item!]! }
`

func mustSchema(t *testing.T, query string) *ast.Schema {
	t.Helper()
	s, err := gqlparser.LoadSchema(&ast.Source{Input: declarations + query})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReadRefusesWhatBoundsNothing(t *testing.T) {
	for _, tc := range []struct{ name, query, want string }{
		{"a weight that is no integer", `type Query { a: Int @cost(weight: "1.5") }`, "positive integers"},
		{"a weight of zero", `type Query { a: Int @cost(weight: "0") }`, "positive integers"},
		{"a slicing argument the field does not have", `type Query { a(first: Int): Items @listSize(slicingArguments: ["last"]) }`, `"last"`},
		{"a list size without a size", `type Query { a: [Item] @listSize(sizedFields: ["nodes"]) }`, "bounds nothing"},
		{"an assumed size of zero", `type Query { a: [Item] @listSize(assumedSize: 0) }`, "positive integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cost.Read(mustSchema(t, tc.query))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "Query.a:") {
				t.Errorf("Read: %v, want an error about Query.a naming %s", err, tc.want)
			}
		})
	}
}

func TestSizeAndEstimate(t *testing.T) {
	w, err := cost.Read(mustSchema(t, `type Query {
		page(first: Int = 20, last: Int): Items @listSize(slicingArguments: ["first", "last"], sizedFields: ["nodes"], requireOneSlicingArgument: false)
		few: [Item!]! @listSize(assumedSize: 7)
		dear: Int @cost(weight: "40")
		plain: Int
	}`))
	if err != nil {
		t.Fatal(err)
	}
	args := func(m map[string]int) func(string) (int, bool) {
		return func(n string) (int, bool) { v, ok := m[n]; return v, ok }
	}
	page, few := w.Field("Query", "page"), w.Field("Query", "few")
	for _, tc := range []struct {
		name string
		got  int
		want int
	}{
		{"first", page.Size(args(map[string]int{"first": 5}), 100), 5},
		{"the larger of first and last", page.Size(args(map[string]int{"first": 5, "last": 9}), 100), 9},
		{"at most the largest page", page.Size(args(map[string]int{"first": 500}), 100), 100},
		{"at least one", page.Size(args(map[string]int{"first": -3}), 100), 1},
		{"no slicing argument given: 1", page.Size(args(nil), 100), 1},
		{"the assumed size", few.Size(args(nil), 100), 7},
		{"a list's estimate: weight plus size times its selection", few.Estimate(3, 7), 1 + 3*7},
		{"a weight", w.Weight("Query", "dear"), 40},
		{"no directive: 1", w.Weight("Query", "plain"), 1},
		{"an unknown field: 1", w.Weight("Nope", "nope"), 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	if lists := w.Lists(); len(lists) != 2 {
		t.Errorf("Lists: %v, want Query.page and Query.few", lists)
	}
}

func TestCounterAddsConcurrently(t *testing.T) {
	var c cost.Counter
	done := make(chan struct{})
	for range 8 {
		go func() {
			for range 1000 {
				c.Add(2)
			}
			done <- struct{}{}
		}()
	}
	for range 8 {
		<-done
	}
	if c.Total() != 16000 {
		t.Errorf("Total %d, want 16000", c.Total())
	}
}
