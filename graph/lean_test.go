package graph_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// The lean indexes (docs/design.md, "Items", ⁶): a page of a project's
// tasks that selects only what a list shows is read from GSI4's entries,
// and its comments from GSI3's. TestTaskPagesFromGSI4AnswerAsTheItems
// pages through a project's tasks, forwards and backwards, of a status
// and all, with such a selection and with one that also selects fields
// only the items hold (description, version): the common fields, the
// cursors and the page info are the same, on every backend.
func TestTaskPagesFromGSI4AnswerAsTheItems(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		s := e.MustSeed(t)
		const listed = `id title status dueDate assignee { id } tags { name } commentCount
			comments(first: 2) { nodes { id body createdAt author { id } task { id } } pageInfo { hasNextPage } }`
		type page struct {
			Project struct {
				Tasks struct {
					Edges []struct {
						Cursor string
						Node   map[string]any
					}
					PageInfo struct {
						HasNextPage, HasPreviousPage bool
						StartCursor, EndCursor       *string
					}
				}
			}
		}
		for _, status := range []string{"null", "TODO"} {
			walk := func(fields string, backward bool) []string {
				var out []string
				var cur *string
				for range 20 {
					args := "first: 2, after: $c"
					if backward {
						args = "last: 2, before: $c"
					}
					var got page
					e.MustQuery(t, "alice", `query($id: ID!, $c: String) { project(id: $id) { tasks(status: `+status+`, `+args+`) {
						edges { cursor node { `+fields+` } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`,
						map[string]any{"id": s.Project("Website relaunch").ID, "c": cur}, &got)
					c := got.Project.Tasks
					for _, ed := range c.Edges {
						delete(ed.Node, "description")
						delete(ed.Node, "version")
						b, _ := json.Marshal(ed.Node)
						out = append(out, ed.Cursor+" "+string(b))
					}
					pi, _ := json.Marshal(c.PageInfo)
					out = append(out, string(pi))
					if backward && !c.PageInfo.HasPreviousPage || !backward && !c.PageInfo.HasNextPage {
						break
					}
					if backward {
						cur = c.PageInfo.StartCursor
					} else {
						cur = c.PageInfo.EndCursor
					}
				}
				return out
			}
			for _, backward := range []bool{false, true} {
				lean, full := walk(listed, backward), walk(listed+" description version", backward)
				if strings.Join(lean, "\n") != strings.Join(full, "\n") || len(lean) < 4 {
					t.Errorf("status %s, backward %v: from GSI4\n%s\nfrom the items\n%s", status, backward, strings.Join(lean, "\n"), strings.Join(full, "\n"))
				}
			}
		}
	})
}

// TestDeferredFieldsOfATaskListAreNotAnsweredByItsEntries defers, under a
// page of a project's tasks, fields GSI4's entries do not hold: the
// deferred parts are those of the query without @defer.
func TestDeferredFieldsOfATaskListAreNotAnsweredByItsEntries(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	const deferred = `query($id: ID!) { project(id: $id) { tasks(first: 10) { nodes { id title ... @defer(label: "more") { description version createdAt } } } } }`
	plain := strings.ReplaceAll(deferred, `@defer(label: "more")`, "")
	vars := map[string]any{"id": s.Project("Website relaunch").ID}
	var want any
	e.MustQuery(t, "alice", plain, vars, &want)
	raw := e.Send(t, map[string]any{"query": deferred, "variables": vars}, e.As("alice"),
		testenv.Header("Accept", "multipart/mixed;deferSpec=20220824, application/json"))
	parts := testenv.MultipartParts(t, raw.Header.Get("Content-Type"), bytes.NewReader(raw.Body))
	got, _ := json.Marshal(testenv.MergeParts(t, parts))
	exp, _ := json.Marshal(want)
	if len(parts) < 2 || string(got) != string(exp) || !strings.Contains(string(exp), `"version":1`) {
		t.Errorf("%d parts, merged:\n %s\nwithout @defer:\n %s", len(parts), got, exp)
	}
}
