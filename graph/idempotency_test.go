package graph_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// idemDo runs a query as viewer with an Idempotency-Key header.
func idemDo(t *testing.T, e *testenv.Env, viewer, key, query string, vars map[string]any) testenv.Response {
	t.Helper()
	return *e.Send(t, map[string]any{"query": query, "variables": vars}, e.As(viewer), testenv.Header("Idempotency-Key", key)).Decode(t)
}

// idemCount counts the table's items of a type attribute.
func idemCount(tb testing.TB, e *testenv.Env, typ string) int {
	tb.Helper()
	n := 0
	for _, it := range e.Items(tb) {
		if it["type"] == typ {
			n++
		}
	}
	return n
}

const idemCreate = `mutation($p: ID!) { createTask(input: {projectId: $p, title: "Once"}) { id version } }`

func idemTaskID(t *testing.T, res testenv.Response) string {
	t.Helper()
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	var d struct{ CreateTask struct{ ID string } }
	_ = json.Unmarshal(res.Data, &d)
	return d.CreateTask.ID
}

func TestIdempotencyKey(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	web := s.Project("Website relaunch").ID
	vars := map[string]any{"p": web}

	t.Run("a create retried with the same key creates once and answers alike", func(t *testing.T) {
		before := idemCount(t, e, "TASK")
		first := idemTaskID(t, idemDo(t, e, "alice", "k-1", idemCreate, vars))
		again := idemTaskID(t, idemDo(t, e, "alice", "k-1", idemCreate, vars))
		if first == "" || first != again {
			t.Fatalf("ids %q and %q, want one", first, again)
		}
		if n := idemCount(t, e, "TASK") - before; n != 1 {
			t.Fatalf("%d tasks created, want 1", n)
		}
	})
	t.Run("another key or another viewer acts again", func(t *testing.T) {
		a := idemTaskID(t, idemDo(t, e, "alice", "k-2", idemCreate, vars))
		b := idemTaskID(t, idemDo(t, e, "alice", "k-3", idemCreate, vars))
		c := idemTaskID(t, idemDo(t, e, "bob", "k-2", idemCreate, vars))
		if a == b || a == c || b == c {
			t.Fatalf("ids %q %q %q, want three", a, b, c)
		}
	})
	t.Run("an update retried with the same key increases the version once", func(t *testing.T) {
		id := s.Task("Set up analytics").ID
		q := `mutation($id: ID!) { updateTask(input: {id: $id, title: "Analytics"}) { version } }`
		var versions []string
		for range 3 {
			res := idemDo(t, e, "alice", "u-1", q, map[string]any{"id": id})
			if len(res.Errors) > 0 {
				t.Fatalf("errors: %+v", res.Errors)
			}
			versions = append(versions, string(res.Data))
		}
		if versions[0] != `{"updateTask":{"version":2}}` || versions[1] != versions[0] || versions[2] != versions[0] {
			t.Fatalf("versions %v, want version 2 three times", versions)
		}
	})
	t.Run("a delete retried with the same key succeeds again", func(t *testing.T) {
		id := s.Task("Launch announcement").ID
		q := `mutation($id: ID!) { deleteTask(id: $id) }`
		for i := range 2 {
			res := idemDo(t, e, "alice", "d-1", q, map[string]any{"id": id})
			if len(res.Errors) > 0 || !strings.Contains(string(res.Data), id) {
				t.Fatalf("call %d: %s %+v", i, res.Data, res.Errors)
			}
		}
		if res := idemDo(t, e, "alice", "", q, map[string]any{"id": id}); len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
			t.Fatalf("without the key the task is gone: %+v", res.Errors)
		}
	})
	t.Run("two mutation fields under one key are kept apart by their aliases", func(t *testing.T) {
		q := `mutation($p: ID!) { a: createTask(input: {projectId: $p, title: "A"}) { id } b: createTask(input: {projectId: $p, title: "B"}) { id } }`
		res := idemDo(t, e, "alice", "two", q, vars)
		var d struct{ A, B struct{ ID string } }
		_ = json.Unmarshal(res.Data, &d)
		if len(res.Errors) > 0 || d.A.ID == "" || d.A.ID == d.B.ID {
			t.Fatalf("got %s %+v", res.Data, res.Errors)
		}
	})
	t.Run("a malformed key is refused and changes nothing", func(t *testing.T) {
		before := e.Dump(t)
		for _, key := range []string{"has space", strings.Repeat("k", 65), "semi;colon"} {
			res := idemDo(t, e, "alice", key, idemCreate, vars)
			if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" {
				t.Fatalf("key %q: %+v", key, res.Errors)
			}
		}
		if e.Dump(t) != before {
			t.Fatal("a refused mutation changed the table")
		}
	})
	t.Run("concurrent calls with one key create one task", func(t *testing.T) {
		before := idemCount(t, e, "TASK")
		ids := make([]string, 8)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Go(func() {
				res := idemDo(t, e, "alice", "race", idemCreate, vars)
				if len(res.Errors) == 0 {
					ids[i] = idemTaskID(t, res)
				} else if res.Errors[0].Code() != "CONFLICT" {
					t.Errorf("call %d: %+v", i, res.Errors)
				}
			})
		}
		wg.Wait()
		if n := idemCount(t, e, "TASK") - before; n != 1 {
			t.Fatalf("%d tasks created, want 1", n)
		}
		for _, id := range ids {
			if id != "" && id != ids[slicesIndexNonEmpty(ids)] {
				t.Fatalf("different answers: %v", ids)
			}
		}
	})
}

func slicesIndexNonEmpty(ids []string) int {
	for i, id := range ids {
		if id != "" {
			return i
		}
	}
	return 0
}
