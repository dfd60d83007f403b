package pipeline_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/web"
)

func limQuery(q string) string {
	b, _ := json.Marshal(map[string]string{"query": q})
	return string(b)
}

func TestLimitsRefuseBeforeAnyRead(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	deep := "{ me { projects { nodes { tasks { nodes { project { tasks { nodes { project { tasks { nodes { project { name } } } } } } } } } } } } }"
	relayDashboard := `{ me { projects(first: 10) { edges { node { name members { user { name } }
		tasks(first: 20) { edges { node { title assignee { name } tags { name }
		comments(first: 5) { edges { node { body author { name } } } pageInfo { hasNextPage } } } } } } } } } }`
	var aliases strings.Builder
	aliases.WriteString("{ ")
	for i := range pipeline.DefaultMaxAliases + 1 {
		fmt.Fprintf(&aliases, "a%d: me { id } ", i)
	}
	aliases.WriteString("}")
	huge := "{ me { " + strings.Repeat("id ", pipeline.DefaultMaxTokens) + "} }"

	for _, tc := range []struct {
		name, query, code string
	}{
		{"nine object levels are too deep", deep, "COMPLEXITY_LIMIT_EXCEEDED"},
		{"too many aliases", aliases.String(), "COMPLEXITY_LIMIT_EXCEEDED"},
		{"too many tokens", huge, "GRAPHQL_PARSE_FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.Calls.Reset()
			res := e.Query(t, "alice", tc.query, nil)
			if len(res.Errors) != 1 || res.Errors[0].Code() != tc.code {
				t.Fatalf("want one %s, got %+v", tc.code, res.Errors)
			}
			if n := e.Calls.Total(); n != 0 {
				t.Errorf("%d DynamoDB calls before the refusal, want 0", n)
			}
		})
	}
	t.Run("the dashboard in Relay style is within the limits", func(t *testing.T) {
		e.MustQuery(t, "alice", relayDashboard, nil, nil)
	})
}

func TestLimitsBodySize(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	pad := strings.Repeat(" ", web.DefaultMaxBodyBytes)
	for _, tc := range []struct {
		name   string
		body   string
		status int
	}{
		{"a body within the limit is served", limQuery("{ me { id } }"), 200},
		{"a body over the limit is 413", `{"query": "{ me { id } }"` + pad + `}`, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := e.Send(t, nil, e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", tc.body))
			status, res := raw.Status, *raw.Decode(t)
			if status != tc.status {
				t.Fatalf("status %d, want %d (%+v)", status, tc.status, res.Errors)
			}
			if tc.status != 200 && (len(res.Errors) != 1 || res.Errors[0].Code() != codes.BadRequest) {
				t.Fatalf("want one BAD_REQUEST error, got %+v", res.Errors)
			}
		})
	}
}

func TestLimitsProductionModeHasNoIntrospection(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	h := e.NewHandler(pipeline.Options{Production: true})
	res := *e.Send(t, nil, testenv.Via(h), e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", limQuery("{ __schema { queryType { name } } }"))).Decode(t)
	if len(res.Errors) != 1 || res.Errors[0].Code() != "GRAPHQL_VALIDATION_FAILED" {
		t.Fatalf("introspection in production: %+v %s", res.Errors, res.Data)
	}
	res = *e.Send(t, nil, testenv.Via(h), e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", limQuery("{ me { name } }"))).Decode(t)
	if len(res.Errors) != 0 || !strings.Contains(string(res.Data), "Alice") {
		t.Fatalf("a query in production: %+v %s", res.Errors, res.Data)
	}
}

func TestLimitsRequestTimeoutIsServiceUnavailable(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	h := e.NewHandler(pipeline.Options{Limits: pipeline.Limits{Timeout: time.Nanosecond}})
	res := *e.Send(t, nil, testenv.Via(h), e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", limQuery("{ me { name } }"))).Decode(t)
	if len(res.Errors) != 1 || res.Errors[0].Code() != codes.ServiceUnavailable {
		t.Fatalf("want SERVICE_UNAVAILABLE, got %+v %s", res.Errors, res.Data)
	}
}
