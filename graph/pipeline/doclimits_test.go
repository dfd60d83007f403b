package pipeline_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// The cost budgets of one document, within which BenchmarkParseValidate
// measures every shape at under 20 ms of CPU: the nodes any walk visits, the
// field pairs the overlap rule compares, the fragment pairs it compares.
const (
	nodeBudget         = 5_000
	fieldPairBudget    = 20 * 5_000
	fragmentPairBudget = 100 * 100
)

// TestDocumentLimitsBoundTheCost checks, for each expensive shape at the
// largest size the server admits, deterministic proxies of the cost of
// validating it: without the document limits (or with them raised) the
// largest admitted documents exceed these budgets by orders of magnitude.
func TestDocumentLimitsBoundTheCost(t *testing.T) {
	for _, s := range docShapes {
		t.Run(s.name, func(t *testing.T) {
			doc, n := largest(s)
			c, ok := pipeline.DocumentCounts(doc)
			if !ok {
				t.Fatalf("the largest admitted document (%d units) does not parse", n)
			}
			if c.Nodes > nodeBudget || c.FieldPairs > fieldPairBudget || c.Fragments*c.Fragments > fragmentPairBudget {
				t.Errorf("%d units: %d nodes (budget %d), %d field pairs (budget %d), %d fragments (budget %d pairs)",
					n, c.Nodes, nodeBudget, c.FieldPairs, fieldPairBudget, c.Fragments, fragmentPairBudget)
			}
		})
	}
}

// TestDocumentLimitsAdmitLegitimateDocuments checks that the clients'
// persisted documents, the dashboard and the standard introspection queries
// are well within the limits (the largest, graphql-js's introspection query
// with every option, has 498 nodes, one field a response name and 3
// fragments).
func TestDocumentLimitsAdmitLegitimateDocuments(t *testing.T) {
	check := func(t *testing.T, doc string) {
		c, ok := pipeline.DocumentCounts(doc)
		if !ok {
			t.Fatal("does not parse")
		}
		t.Logf("%+v", c)
		if c.Nodes > pipeline.DefaultMaxNodes/5 || c.Repeats > pipeline.DefaultMaxRepeats/5 || c.Fragments > pipeline.DefaultMaxFragments/10 {
			t.Errorf("near the limits: %+v", c)
		}
	}
	t.Run("dashboard", func(t *testing.T) { check(t, testenv.Dashboard) })
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var manifest map[string]string
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	for k, doc := range manifest {
		t.Run("persisted document "+k, func(t *testing.T) { check(t, doc) })
	}
	for _, q := range introspectionQueries {
		t.Run("introspection: "+q.name, func(t *testing.T) { check(t, MustIntrospectionQuery(t, q.options)) })
	}
}

func TestDocumentLimitsRefuseBeforeValidation(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	doubling := func(n int, leaf string) string {
		var b strings.Builder
		b.WriteString("{ me { ...F0 } }")
		for i := range n - 1 {
			fmt.Fprintf(&b, " fragment F%d on User { a: projects { nodes { owner { ...F%d } } } b: projects { nodes { owner { ...F%d } } } }", i, i+1, i+1)
		}
		fmt.Fprintf(&b, " fragment F%d on User { %s }", n-1, leaf)
		return b.String()
	}
	var frags strings.Builder
	frags.WriteString("{ me { ")
	for i := range pipeline.DefaultMaxFragments + 1 {
		fmt.Fprintf(&frags, "...F%d ", i)
	}
	frags.WriteString("} }")
	for i := range pipeline.DefaultMaxFragments + 1 {
		fmt.Fprintf(&frags, " fragment F%d on User { a%d: id }", i, i)
	}
	for _, tc := range []struct{ name, query, message string }{
		{"one field repeated", "{ me { " + strings.Repeat("id ", pipeline.DefaultMaxRepeats+1) + "} }",
			`21 fields of response name "id" are merged into one selection set (fragments, inline fragments and fields of the same name merged, as execution does); the limit is 20`},
		{"repeated through fragments and inline fragments",
			"{ me { projects { nodes { id } } ... on User { projects { nodes { id id ...P ...P } } } } } fragment P on Project { " + strings.Repeat("id ", 9) + "}",
			`21 fields of response name "id" are merged into one selection set (fragments, inline fragments and fields of the same name merged, as execution does); the limit is 20`},
		{"fragments doubling", doubling(30, "id"),
			"the document has 14495514369 nodes (fields, fragment spreads, inline fragments, directives, arguments, variables and values, each fragment counted every time it is spread); the limit is 5000"},
		{"too many fragments", frags.String(), "the document has 101 fragments; the limit is 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.Calls.Reset()
			for _, viewer := range []string{"alice", ""} {
				res := e.Query(t, viewer, tc.query, nil)
				if len(res.Errors) != 1 || res.Errors[0].Code() != codes.Complexity || res.Errors[0].Message != tc.message {
					t.Fatalf("want one %s %q, got %+v", codes.Complexity, tc.message, res.Errors)
				}
			}
			if n := e.Calls.Total(); n != 0 {
				t.Errorf("%d DynamoDB calls before the refusal, want 0", n)
			}
		})
	}
	t.Run("the limits are options", func(t *testing.T) {
		h := e.NewHandler(pipeline.Options{Limits: pipeline.Limits{MaxRepeats: 30, MaxNodes: 10, MaxFragments: 1}})
		res := *e.Send(t, nil, testenv.Via(h), e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", limQuery("{ me { "+strings.Repeat("id ", 21)+"} }"))).Decode(t)
		if len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0].Message, "the document has 22 nodes") {
			t.Fatalf("got %+v", res.Errors)
		}
	})
}
