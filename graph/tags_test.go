package graph_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// Tag implements Node: its id ("tag#" and the name) is the same for every
// viewer, node(id:) answers it, and its tasks are still the viewer's only.

func TestTagIsANode(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	crash := s.Task("Crash on start on Android 12").ID

	t.Run("a task's tags have the same ids for every viewer", func(t *testing.T) {
		ids := map[string][]string{}
		for _, viewer := range []string{"alice", "dave"} {
			var got struct {
				Task struct {
					Tags []struct{ ID, Name string }
				}
			}
			e.MustQuery(t, viewer, `query($id: ID!) { task(id: $id) { tags { id name } } }`, map[string]any{"id": crash}, &got)
			for _, tag := range got.Task.Tags {
				if tag.ID != "tag#"+tag.Name {
					t.Errorf("%s: tag %q has the id %q, want tag#%s", viewer, tag.Name, tag.ID, tag.Name)
				}
				ids[viewer] = append(ids[viewer], tag.ID)
			}
		}
		if want := []string{"tag#android", "tag#bug", "tag#urgent"}; !slices.Equal(slices.Sorted(slices.Values(ids["alice"])), want) ||
			!slices.Equal(ids["alice"], ids["dave"]) {
			t.Errorf("alice sees the tag ids %v, dave %v; want both %v", ids["alice"], ids["dave"], want)
		}
	})

	t.Run("node(id:) answers a tag with the viewer's tasks only, as tasksByTag does", func(t *testing.T) {
		for viewer, want := range map[string][]string{
			"alice": {"Write the landing page copy", "Crash on start on Android 12", "Fix the broken signup form"},
			"dave":  {"Benchmark the new model", "Crash on start on Android 12"},
			"eve":   {},
		} {
			var got struct {
				Node struct {
					Typename string `json:"__typename"`
					ID, Name string
					Tasks    struct{ Nodes []struct{ Title string } }
				}
				TasksByTag struct{ Nodes []struct{ Title string } }
			}
			e.MustQuery(t, viewer, `query($id: ID!) {
				node(id: $id) { __typename id ... on Tag { name tasks(first: 100) { nodes { title } } } }
				tasksByTag(tag: "urgent", first: 100) { nodes { title } } }`, map[string]any{"id": "tag#urgent"}, &got)
			titles := func(ns []struct{ Title string }) []string {
				out := []string{}
				for _, n := range ns {
					out = append(out, n.Title)
				}
				return out
			}
			if got.Node.Typename != "Tag" || got.Node.ID != "tag#urgent" || got.Node.Name != "urgent" {
				t.Errorf("%s: node(tag#urgent) = %s %s %q", viewer, got.Node.Typename, got.Node.ID, got.Node.Name)
			}
			if tasks := titles(got.Node.Tasks.Nodes); !slices.Equal(tasks, want) || !slices.Equal(tasks, titles(got.TasksByTag.Nodes)) {
				t.Errorf("%s: the tag's tasks %q, tasksByTag %q; want %q", viewer, tasks, titles(got.TasksByTag.Nodes), want)
			}
		}
	})

	t.Run("node(id:) of a tag reads nothing", func(t *testing.T) {
		e.Calls.Reset()
		var got struct{ Node struct{ ID, Name string } }
		e.MustQuery(t, "alice", `{ node(id: "tag#urgent") { id ... on Tag { name } } }`, nil, &got)
		if got.Node.ID != "tag#urgent" || got.Node.Name != "urgent" {
			t.Errorf("node = %+v", got.Node)
		}
		if n := e.Calls.Total(); n != 0 {
			t.Errorf("%d DynamoDB calls (%v), want none", n, e.Calls)
		}
	})
}

// TestTagIDsCostNoCall pins that the screens listing tags read what they
// read without the tags' ids: the same DynamoDB calls by operation, stepped
// level by level so that the counts do not depend on the machine's load.
func TestTagIDsCostNoCall(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	vars := map[string]any{"project": s.Project("Website relaunch").ID, "task": s.Task("Crash on start on Android 12").ID}
	screens := []struct{ name, query string }{
		{"a project's tasks", `query($project: ID!) { project(id: $project) { tasks(first: 20) { edges { cursor node { id title TAGS } } } } }`},
		{"a task", `query($task: ID!) { task(id: $task) { id title TAGS comments(first: 5) { edges { node { id body } } } } }`},
		{"assigned and overdue tasks", `{ me { assignedTasks(first: 20) { edges { node { id TAGS } } } overdueTasks(first: 20) { edges { node { id TAGS } } } } }`},
		{"a tag's tasks with their tags", `{ tasksByTag(tag: "urgent", first: 20) { edges { node { id TAGS project { id name } } } } }`},
		{"the dashboard", `{ me { projects(first: 10) { edges { node { id name members { role user { id name } }
			tasks(first: 20) { edges { node { id title TAGS assignee { id name } comments(first: 5) { edges { node { id author { id name } } } } } } } } } } } }`},
		{"a tag's page through node(id:)", `{ node(id: "tag#urgent") { id ... on Tag { name tasks(first: 20) { edges { node { id TAGS } } } } } }`},
	}
	for _, sc := range screens {
		t.Run(sc.name, func(t *testing.T) {
			count := func(tags string) map[string]int {
				t.Helper()
				e.Calls.Reset()
				var got map[string]any
				e.MustQuery(t, "alice", strings.ReplaceAll(sc.query, "TAGS", tags), vars, &got)
				return e.Calls.ByOp()
			}
			without, with := count("tags { name }"), count("tags { id name }")
			if len(without) == 0 || !maps.Equal(with, without) {
				t.Errorf("with the tags' ids %v, without %v; want the same, not none", with, without)
			}
			t.Logf("calls, with the ids as without: %v", with)
		})
	}
}
