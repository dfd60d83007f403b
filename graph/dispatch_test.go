package graph_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/taskgraph/taskgraph/graph/dispatch"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// No query waits for the dispatch's safety net: a selection over an
// abstract type (a sync page's upserts, node) whose objects' fields the
// dispatch cannot work out ahead must not hold the fields after it as
// about to start, for gqlgen starts them only once those objects are done
// (their loaders' keys then waited for the net, a second each).
func TestNoQueryWaitsForTheSafetyNet(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	levels := &dispatch.Levels{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	h := e.NewHandler(pipeline.Options{Hooks: pipeline.Hooks{Loaders: loaders.Config{Dispatch: levels}}})
	task := s.Task("Fix the broken signup form")
	for _, q := range []struct {
		name, doc string
		vars      map[string]any
	}{
		{"a sync page's upserts, then its tombstones", `{ sync(first: 100) { upserts { id ... on Project { name members { user { id name } } } ... on Task { title assignee { id name } } } tombstones { nodeId } nextToken hasMore } }`, nil},
		{"node, then a sibling", `query($id: ID!) { node(id: $id) { id ... on Task { project { id name members { user { name } } } } } me { id projects(first: 5) { nodes { id } } } }`,
			map[string]any{"id": task.ID}},
		{"the dashboard", `{ me { projects(first: 10) { nodes { name members { user { name } } tasks(first: 20) { nodes { title assignee { name } comments(first: 5) { nodes { body author { name } } } } } } } } }`, nil},
	} {
		t.Run(q.name, func(t *testing.T) {
			before := levels.Stalls()
			res := e.Send(t, map[string]any{"query": q.doc, "variables": q.vars}, e.As("alice"), testenv.Via(h)).Decode(t)
			if len(res.Errors) > 0 {
				t.Fatalf("%+v", res.Errors)
			}
			if n := levels.Stalls() - before; n != 0 {
				t.Errorf("the safety net read the loaders' keys %d times: a field counted as about to start never started", n)
			}
		})
	}
}
