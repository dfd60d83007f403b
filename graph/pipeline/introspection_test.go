package pipeline_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// MustIntrospectionQuery returns graphql-js's getIntrospectionQuery(options)
// (options: a JavaScript object literal), produced by node with the graphql
// package of the repo's node_modules (npm ci). Without node or the package
// the test fails under CI (CI set) and is skipped otherwise.
func MustIntrospectionQuery(tb testing.TB, options string) string {
	tb.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		tb.Fatal(err)
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(root, "node_modules", "graphql", "package.json")); err != nil {
		missing = "node_modules/graphql is missing (run npm ci at the repo root)"
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("the introspection tests need graphql-js: %s", missing)
		}
		tb.Skipf("the introspection tests need graphql-js: %s", missing)
	}
	cmd := exec.Command("node", "-e", `process.stdout.write(require("graphql").getIntrospectionQuery(`+options+`))`)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("node getIntrospectionQuery(%s): %v\n%s", options, err, out)
	}
	return string(out)
}

// The option sets of the standard introspection queries.
var introspectionQueries = []struct{ name, options string }{
	// Every option graphql-js 16 has.
	{"graphql-js with every option", `{descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true,
		schemaDescription: true, inputValueDeprecation: true, oneOf: true}`},
	// GraphiQL 4 and 5 (the IDE at GET /) call getIntrospectionQuery with
	// their inputValueDeprecation and schemaDescription props; gqlgen's page
	// sets inputValueDeprecation.
	{"GraphiQL", `{inputValueDeprecation: true}`},
	{"GraphiQL with schemaDescription", `{inputValueDeprecation: true, schemaDescription: true}`},
	// graphql-codegen's and Apollo's defaults: graphql-js's defaults.
	{"graphql-js defaults (graphql-codegen)", `{}`},
}

func TestIntrospectionStandardQueriesPass(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	for _, q := range introspectionQueries {
		query := MustIntrospectionQuery(t, q.options)
		for _, viewer := range []string{"", "alice"} {
			t.Run(fmt.Sprintf("%s, token %v", q.name, viewer != ""), func(t *testing.T) {
				e.Calls.Reset()
				var out struct {
					Schema struct {
						QueryType struct{ Name string }
						Types     []struct{ Name string }
					} `json:"__schema"`
				}
				e.MustQuery(t, viewer, query, nil, &out)
				if out.Schema.QueryType.Name != "Query" || len(out.Schema.Types) < 10 {
					t.Fatalf("queryType %q, %d types", out.Schema.QueryType.Name, len(out.Schema.Types))
				}
				if n := e.Calls.Total(); n != 0 {
					t.Errorf("introspection made %d DynamoDB calls", n)
				}
			})
		}
	}
	t.Run("several __type reads with the full fragments", func(t *testing.T) {
		full := MustIntrospectionQuery(t, introspectionQueries[0].options)
		frags := full[strings.Index(full, "fragment FullType"):]
		q := `{ a: __type(name: "Task") { ...FullType } b: __type(name: "UpdateTaskInput") { ...FullType } }` + frags
		var out struct{ A, B struct{ Name string } }
		e.MustQuery(t, "", q, nil, &out)
		if out.A.Name != "Task" || out.B.Name != "UpdateTaskInput" {
			t.Fatalf("got %+v", out)
		}
	})
}

func TestIntrospectionAbuseIsRefused(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	chain := func(n int) string {
		return `{ __type(name: "Query") { fields { type { ` + strings.Repeat("ofType { ", n) + "name" + strings.Repeat(" }", n) + " } } } }"
	}
	var manySchemas strings.Builder
	manySchemas.WriteString("{ ")
	for i := range 100 {
		fmt.Fprintf(&manySchemas, "s%d: __schema { types { name } } ", i)
	}
	manySchemas.WriteString("}")
	full := MustIntrospectionQuery(t, introspectionQueries[0].options)
	expensive := strings.Replace(full, "__schema {", `me { projects(first: 100) { nodes { tasks(first: 100) { nodes {
		comments(first: 100) { nodes { body } } } } } } } __schema {`, 1)
	for _, tc := range []struct {
		name, query, code string
	}{
		{"a 13-level ofType chain", chain(13), codes.Complexity},
		{"100 aliased __schema reads", manySchemas.String(), codes.Complexity},
		{"an alias inside introspection", `{ __schema { types { n: name } } }`, codes.Complexity},
		{"fields → type → fields fan-out (gqlparser's MaxIntrospectionDepth)",
			`{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }`,
			"GRAPHQL_VALIDATION_FAILED"},
		{"an introspection query hiding an expensive read", expensive, codes.Complexity},
	} {
		for _, viewer := range []string{"", "alice"} {
			t.Run(fmt.Sprintf("%s, token %v", tc.name, viewer != ""), func(t *testing.T) {
				e.Calls.Reset()
				res := e.Query(t, viewer, tc.query, nil)
				if len(res.Errors) != 1 || res.Errors[0].Code() != tc.code || string(res.Data) != "" && string(res.Data) != "null" {
					t.Fatalf("want one %s and no data, got %+v %s", tc.code, res.Errors, res.Data)
				}
				if n := e.Calls.Total(); n != 0 {
					t.Errorf("%d DynamoDB calls before the refusal", n)
				}
			})
		}
	}
	t.Run("a 9-level ofType chain passes", func(t *testing.T) {
		e.MustQuery(t, "", chain(9), nil, nil)
	})
}

// TestIntrospectionUnderTheCostLimit checks that gqlgen's complexity limit
// does not count the full introspection query as expensive: it passes a
// limit far below the default.
func TestIntrospectionUnderTheCostLimit(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	h := e.NewHandler(pipeline.Options{Limits: pipeline.Limits{ComplexityLimit: 1000}})
	body, _ := json.Marshal(map[string]string{"query": MustIntrospectionQuery(t, introspectionQueries[0].options)})
	res := *e.Send(t, nil, testenv.Via(h), e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", string(body))).Decode(t)
	if len(res.Errors) != 0 || !strings.Contains(string(res.Data), `"queryType":{"name":"Query"`) {
		t.Fatalf("%+v %.200s", res.Errors, res.Data)
	}
}
