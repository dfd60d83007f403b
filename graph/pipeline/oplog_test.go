package pipeline_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// logMarker is placed in variables, tokens and query text: it must never
// reach the log.
const logMarker = "Zq7SecretMarker"

// opLogEnv returns a seeded Env whose handler logs JSON into the returned
// buffer.
func opLogEnv(t *testing.T) (*testenv.Env, *bytes.Buffer) {
	t.Helper()
	e := testenv.New(t)
	e.MustSeed(t)
	var buf bytes.Buffer
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Log: slog.New(slog.NewJSONHandler(&buf, nil))}})
	return e, &buf
}

// mustOpLines returns the log's operation lines (testenv.OpLines).
func mustOpLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	return testenv.OpLines(t, buf)
}

// mustOneOpLine returns the only operation line of the log and empties it.
func mustOneOpLine(t *testing.T, buf *bytes.Buffer) map[string]any {
	t.Helper()
	ops := mustOpLines(t, buf)
	if len(ops) != 1 {
		t.Fatalf("want one operation line, got %d:\n%s", len(ops), buf)
	}
	buf.Reset()
	return ops[0]
}

func TestOperationLogLine(t *testing.T) {
	e, buf := opLogEnv(t)
	s := e.Seed(t)
	task := s.Task("Write the landing page copy")

	t.Run("a query logs its name, type, calls and OK, and no trace id without traceparent", func(t *testing.T) {
		code := e.Send(t, map[string]any{"query": `query Dashboard { me { projects(first: 5) { nodes { id } } } }`,
			"operationName": "Dashboard"}, testenv.Headers(map[string]string{"Authorization": "Bearer " + e.Token(t, "alice")})).Status
		if code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		line := mustOneOpLine(t, buf)
		for k, want := range map[string]any{"operation": "Dashboard", "type": "query", "outcome": "OK", "errors": 0.0, "level": "INFO"} {
			if line[k] != want {
				t.Errorf("%s = %#v, want %#v (line %v)", k, line[k], want, line)
			}
		}
		if ms, ok := line["ms"].(float64); !ok || ms < 0 {
			t.Errorf("ms = %#v, want a duration in milliseconds", line["ms"])
		}
		total, _ := line["dynamodb_calls"].(float64)
		byOp, ok := line["dynamodb_by_op"].(map[string]any)
		if !ok || total < 1 {
			t.Fatalf("dynamodb_calls = %v, dynamodb_by_op = %#v: want at least one call, by operation", line["dynamodb_calls"], line["dynamodb_by_op"])
		}
		sum := 0.0
		for _, n := range byOp {
			sum += n.(float64)
		}
		if sum != total {
			t.Errorf("dynamodb_by_op %v sums to %v, dynamodb_calls is %v", byOp, sum, total)
		}
		if _, ok := line["trace_id"]; ok {
			t.Errorf("trace_id %v logged without a traceparent header", line["trace_id"])
		}
		if _, ok := line["dynamodb_capacity"]; ok {
			t.Error("dynamodb_capacity logged, but capacity is not requested")
		}
	})

	t.Run("an anonymous query logs an empty operation name", func(t *testing.T) {
		e.Send(t, map[string]any{"query": `{ me { id } }`}, testenv.Headers(map[string]string{"Authorization": "Bearer " + e.Token(t, "alice")}))
		line := mustOneOpLine(t, buf)
		if line["operation"] != "" || line["type"] != "query" || line["outcome"] != "OK" {
			t.Errorf("operation %#v type %#v outcome %#v, want \"\" query OK", line["operation"], line["type"], line["outcome"])
		}
	})

	t.Run("a failing mutation logs its first error's code", func(t *testing.T) {
		e.Send(t, map[string]any{
			"query":     `mutation Rename($in: UpdateTaskInput!) { updateTask(input: $in) { id } }`,
			"variables": map[string]any{"in": map[string]any{"id": task.ID, "title": "x"}},
		}, testenv.Headers(map[string]string{"Authorization": "Bearer " + e.Token(t, "eve")})) // eve is no member of the task's project
		line := mustOneOpLine(t, buf)
		for k, want := range map[string]any{"operation": "Rename", "type": "mutation", "outcome": "NOT_FOUND", "errors": 1.0} {
			if line[k] != want {
				t.Errorf("%s = %#v, want %#v (line %v)", k, line[k], want, line)
			}
		}
	})

	t.Run("bad input is BAD_USER_INPUT", func(t *testing.T) {
		e.Send(t, map[string]any{"query": `{ me { projects(first: 0) { nodes { id } } } }`},
			testenv.Headers(map[string]string{"Authorization": "Bearer " + e.Token(t, "alice")}))
		if line := mustOneOpLine(t, buf); line["outcome"] != "BAD_USER_INPUT" {
			t.Errorf("outcome = %#v, want BAD_USER_INPUT", line["outcome"])
		}
	})

	t.Run("a parse error logs an empty type and its code", func(t *testing.T) {
		e.Send(t, map[string]any{"query": `{ me { id }`}, testenv.Headers(map[string]string{"Authorization": "Bearer " + e.Token(t, "alice")}))
		line := mustOneOpLine(t, buf)
		if line["outcome"] != "GRAPHQL_PARSE_FAILED" || line["type"] != "" {
			t.Errorf("outcome %#v type %#v, want GRAPHQL_PARSE_FAILED and \"\"", line["outcome"], line["type"])
		}
	})

	t.Run("a 304 logs its line, with what its check read", func(t *testing.T) {
		q := map[string]any{"query": `query Me { me { id name } }`}
		first := e.Send(t, q, testenv.GET(), e.As("alice"))
		tag := first.Header.Get("ETag")
		if first.Status != http.StatusOK || tag == "" {
			t.Fatalf("the first GET answered %d with ETag %q", first.Status, tag)
		}
		if line := mustOneOpLine(t, buf); line["outcome"] != "OK" {
			t.Errorf("the answered GET's outcome is %v, want OK", line["outcome"])
		}
		again := e.Send(t, q, testenv.GET(), e.As("alice"), testenv.Header("If-None-Match", tag))
		if again.Status != http.StatusNotModified {
			t.Fatalf("the unchanged GET answered %d, want 304", again.Status)
		}
		line := mustOneOpLine(t, buf)
		for k, want := range map[string]any{"operation": "Me", "type": "query", "outcome": "NOT_MODIFIED", "errors": 0.0,
			"dynamodb_calls": 1.0, "rcu": 0.5} {
			if line[k] != want {
				t.Errorf("%s = %#v, want %#v (line %v)", k, line[k], want, line)
			}
		}
	})

	t.Run("a valid traceparent logs its trace id", func(t *testing.T) {
		const traceID = "4bf92f3577b34da6a3ce929b0e0e4736"
		e.Send(t, map[string]any{"query": `{ me { id } }`}, testenv.Headers(map[string]string{"Authorization": "Bearer " + e.Token(t, "alice"),
			"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}))
		if line := mustOneOpLine(t, buf); line["trace_id"] != traceID {
			t.Errorf("trace_id = %#v, want %s", line["trace_id"], traceID)
		}
	})
}

func TestOperationLogNeverHoldsTokensVariablesOrDocuments(t *testing.T) {
	e, buf := opLogEnv(t)
	task := e.Seed(t).Task("Write the landing page copy")
	token := e.Token(t, "alice")
	requests := []struct {
		name    string
		body    map[string]any
		auth    string
		outcome string
	}{
		{"a mutation with the marker in a variable and in the query text", map[string]any{
			"query":     "# " + logMarker + "\nmutation { updateTask(input: {id: \"" + task.ID + "\", description: \"" + logMarker + "\"}) { id } }",
			"variables": map[string]any{"unused": logMarker},
		}, "Bearer " + token, "OK"},
		{"a query with the marker in a variable", map[string]any{
			"query": `query($t: String!) { tasksByTag(tag: $t, first: 5) { nodes { id } } }`, "variables": map[string]any{"t": logMarker},
		}, "Bearer " + token, "OK"},
		{"a bad input with the marker in a variable", map[string]any{
			"query":     `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { id } }`,
			"variables": map[string]any{"in": map[string]any{"id": logMarker, "title": logMarker}},
		}, "Bearer " + token, ""},
		{"a token made of the marker", map[string]any{"query": `{ me { id } }`}, "Bearer " + logMarker, "UNAUTHENTICATED"},
		{"a parse error quoting the marker", map[string]any{"query": "{ me { " + logMarker + " "}, "Bearer " + token, "GRAPHQL_PARSE_FAILED"},
	}
	for _, r := range requests {
		t.Run(r.name, func(t *testing.T) {
			buf.Reset()
			e.Send(t, r.body, testenv.Headers(map[string]string{"Authorization": r.auth}))
			out := buf.String()
			if len(mustOpLines(t, buf)) != 1 {
				t.Fatalf("want one operation line:\n%s", out)
			}
			line := mustOpLines(t, buf)[0]
			if r.outcome != "" && line["outcome"] != r.outcome {
				t.Errorf("outcome = %#v, want %s", line["outcome"], r.outcome)
			}
			for _, secret := range []string{logMarker, token, "updateTask", "tasksByTag"} {
				if strings.Contains(out, secret) {
					t.Errorf("the log holds %q:\n%s", secret, out)
				}
			}
		})
	}
}

func TestTraceID(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929b0e0e4736"
	cases := []struct {
		name, header string
		ok           bool
	}{
		{"version 00", "00-" + id + "-00f067aa0ba902b7-01", true},
		{"a later version may add fields", "01-" + id + "-00f067aa0ba902b7-01-extra", true},
		{"no header", "", false},
		{"version 00 with more fields", "00-" + id + "-00f067aa0ba902b7-01-extra", false},
		{"version ff", "ff-" + id + "-00f067aa0ba902b7-01", false},
		{"uppercase hex", "00-" + strings.ToUpper(id) + "-00f067aa0ba902b7-01", false},
		{"an all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"an all-zero parent id", "00-" + id + "-0000000000000000-01", false},
		{"a short trace id", "00-" + id[:31] + "-00f067aa0ba902b7-01", false},
		{"not hex", "00-" + id[:31] + "g-00f067aa0ba902b7-01", false},
		{"wrong separators", "00_" + id + "_00f067aa0ba902b7_01", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := pipeline.TraceID(c.header)
			if ok != c.ok || (ok && got != id) || (!ok && got != "") {
				t.Errorf("TraceID(%q) = %q, %v; want ok %v", c.header, got, ok, c.ok)
			}
		})
	}
}
