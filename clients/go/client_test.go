package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/Khan/genqlient/graphql"
	client "github.com/taskgraph/taskgraph/clients/go"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// bearer adds a viewer's token to every request of the generated client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mustClient serves env's real handler over HTTP on loopback and returns a
// genqlient client that sends requests as viewer.
func mustClient(tb testing.TB, env *testenv.Env, viewer string) graphql.Client {
	tb.Helper()
	srv := httptest.NewServer(env.Handler)
	tb.Cleanup(srv.Close)
	hc := &http.Client{Transport: bearer{token: env.Token(tb, viewer), next: srv.Client().Transport}}
	return graphql.NewClient(srv.URL+"/query", hc)
}

func ptr[T any](v T) *T { return &v }

// codes returns the extensions.code of each GraphQL error in err, as a
// genqlient caller sees them.
func codes(err error) []string {
	var list gqlerror.List
	if !errors.As(err, &list) {
		var httpErr *graphql.HTTPError
		if !errors.As(err, &httpErr) {
			return nil
		}
		list = httpErr.Response.Errors
	}
	var out []string
	for _, e := range list {
		c, _ := e.Extensions["code"].(string)
		out = append(out, c)
	}
	return out
}

// TestGeneratedClientEndToEnd drives the server through the genqlient
// client generated from clients/operations: every operation decodes into
// its generated types, paging ends, and a conflict is a coded error.
func TestGeneratedClientEndToEnd(t *testing.T) {
	ctx := context.Background()
	env := testenv.New(t)
	c := mustClient(t, env, "alice")

	if _, err := client.UpdateProfile(ctx, c, "Alice", ptr("alice@example.com")); err != nil {
		t.Fatalf("UpdateProfile: %v", err)
	}
	proj, err := client.CreateProject(ctx, c, "Launch", ptr("the launch plan"))
	if err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	p := proj.CreateProject
	if p.Name != "Launch" || p.Owner.Id != "alice" || len(p.Members) != 1 || p.Members[0].Role != client.ProjectRoleOwner {
		t.Fatalf("created project = %+v", p)
	}

	// Five tasks tagged "release", due on five days, the first assigned.
	var created []string
	for i := range 5 {
		var assignee *string
		if i == 0 {
			assignee = ptr("alice")
		}
		res, err := client.CreateTask(ctx, c, p.Id, fmt.Sprintf("step %d", i+1), ptr(fmt.Sprintf("2026-09-0%d", i+1)),
			assignee, []string{"release", "web"})
		if err != nil {
			t.Fatalf("CreateTask %d: %v", i, err)
		}
		task := res.CreateTask
		if task.Status != client.TaskStatusTodo || task.Version != 1 || task.DueDate == nil || len(task.Tags) != 2 {
			t.Fatalf("created task = %+v", task)
		}
		created = append(created, task.Id)
	}

	t.Run("dashboard decodes nested fragments", func(t *testing.T) {
		d, err := client.Dashboard(ctx, c, ptr(10), ptr(20), ptr(5))
		if err != nil {
			t.Fatalf("Dashboard: %v", err)
		}
		me := d.Me
		if me.Name != "Alice" || me.Email == nil || *me.Email != "alice@example.com" {
			t.Fatalf("me = %+v", me)
		}
		if len(me.Projects.Edges) != 1 || me.Projects.Edges[0].Cursor == "" {
			t.Fatalf("projects = %+v", me.Projects.Edges)
		}
		proj := me.Projects.Edges[0].Node
		if proj.Name != "Launch" || proj.Owner.Name != "Alice" || proj.Tasks.PageInfo.HasNextPage {
			t.Fatalf("project = %+v", proj)
		}
		var titles []string
		for _, e := range proj.Tasks.Edges {
			titles = append(titles, e.Node.Title)
		}
		if want := []string{"step 1", "step 2", "step 3", "step 4", "step 5"}; !slices.Equal(titles, want) {
			t.Fatalf("task titles = %v, want %v (by due date)", titles, want)
		}
		first := proj.Tasks.Edges[0].Node
		if first.Assignee == nil || first.Assignee.Name != "Alice" || first.Tags[0].Id != "tag#"+first.Tags[0].Name || first.CommentCount != 0 {
			t.Fatalf("first task card = %+v", first.TaskCard)
		}
		if c := proj.TaskCounts; c.Total != 5 || c.Todo != 5 || c.InProgress != 0 || c.Done != 0 {
			t.Fatalf("project counts = %+v, want 5 to do", c)
		}
		if len(me.AssignedTasks.Edges) != 1 || me.AssignedTasks.Edges[0].Node.Id != created[0] {
			t.Fatalf("assigned = %+v", me.AssignedTasks.Edges)
		}
	})

	t.Run("tasks by tag in two pages", func(t *testing.T) {
		var seen []string
		var after *string
		for page := 1; ; page++ {
			if page > 2 {
				t.Fatalf("more than two pages of 3 for 5 tasks")
			}
			res, err := client.TasksByTag(ctx, c, "release", 3, after)
			if err != nil {
				t.Fatalf("TasksByTag page %d: %v", page, err)
			}
			conn := res.TasksByTag
			if len(conn.Edges) == 0 {
				t.Fatalf("page %d is empty", page)
			}
			for _, e := range conn.Edges {
				n := e.Node
				if slices.Contains(seen, n.Id) {
					t.Fatalf("task %s on two pages", n.Id)
				}
				if n.Project.Id != p.Id {
					t.Fatalf("task %s in project %s", n.Id, n.Project.Id)
				}
				seen = append(seen, n.Id)
			}
			if !conn.PageInfo.HasNextPage {
				if page != 2 {
					t.Fatalf("hasNextPage false on page %d", page)
				}
				break
			}
			after = conn.PageInfo.EndCursor
		}
		if !slices.Equal(seen, created) {
			t.Fatalf("pages = %v, want %v", seen, created)
		}
	})

	t.Run("a comment thread: the latest first, older ones on scroll", func(t *testing.T) {
		var want []string
		for i := range 5 {
			cm, err := env.Store.AddComment(ctx, "alice", domain.CommentInput{TaskID: created[2], Body: fmt.Sprintf("comment %d", i+1)})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, cm.ID)
		}
		var seen []string
		var before *string
		for page := 1; ; page++ {
			if page > 3 {
				t.Fatalf("more than three pages of 2 for 5 comments")
			}
			res, err := client.CommentThread(ctx, c, created[2], 2, before)
			if err != nil {
				t.Fatalf("CommentThread page %d: %v", page, err)
			}
			conn := res.Task.Comments
			var ids []string
			for _, e := range conn.Edges {
				ids = append(ids, e.Node.Id)
			}
			seen = append(ids, seen...)
			if !conn.PageInfo.HasPreviousPage {
				if page != 3 {
					t.Fatalf("hasPreviousPage false on page %d", page)
				}
				break
			}
			before = conn.PageInfo.StartCursor
		}
		if !slices.Equal(seen, want) {
			t.Fatalf("pages newest first, each oldest first = %v, want %v", seen, want)
		}
	})

	t.Run("a tag's page through node(id:), by the id a task card shows", func(t *testing.T) {
		d, err := client.Dashboard(ctx, c, ptr(10), ptr(20), ptr(5))
		if err != nil {
			t.Fatal(err)
		}
		tagID := d.Me.Projects.Edges[0].Node.Tasks.Edges[0].Node.Tags[0].Id
		var seen []string
		var after *string
		for page := 1; page <= 3; page++ {
			res, err := client.TagPage(ctx, c, tagID, ptr(2), after)
			if err != nil {
				t.Fatalf("TagPage page %d: %v", page, err)
			}
			tag, ok := (*res.Node).(*client.TagPageNodeTag)
			if !ok || tag.Id != tagID || "tag#"+tag.Name != tagID {
				t.Fatalf("node(%s) = %#v, want the tag", tagID, *res.Node)
			}
			for _, e := range tag.Tasks.Edges {
				seen = append(seen, e.Node.Id)
			}
			if !tag.Tasks.PageInfo.HasNextPage {
				break
			}
			after = tag.Tasks.PageInfo.EndCursor
		}
		if !slices.Equal(seen, created) {
			t.Fatalf("the tag's pages = %v, want %v", seen, created)
		}
	})

	t.Run("a project's tasks backwards from the end", func(t *testing.T) {
		var seen []string
		var before *string
		for page := 1; page <= 3; page++ {
			res, err := client.ProjectTasks(ctx, c, p.Id, nil, nil, ptr(2), before)
			if err != nil {
				t.Fatalf("ProjectTasks page %d: %v", page, err)
			}
			conn := res.Project.Tasks
			var ids []string
			for _, e := range conn.Edges {
				ids = append(ids, e.Node.Id)
			}
			seen = append(ids, seen...)
			if !conn.PageInfo.HasPreviousPage {
				break
			}
			before = conn.PageInfo.StartCursor
		}
		if !slices.Equal(seen, created) {
			t.Fatalf("the pages backwards = %v, want %v", seen, created)
		}
	})

	t.Run("an edit changes only the fields given and answers the project's counts; a member leaves", func(t *testing.T) {
		res, err := client.EditTask(ctx, c, client.UpdateTaskInput{Id: created[4], Status: ptr(client.TaskStatusDone), Tags: []string{"release"}})
		if err != nil {
			t.Fatalf("EditTask: %v", err)
		}
		task := res.UpdateTask
		if task.Status != client.TaskStatusDone || task.Title != "step 5" || task.DueDate == nil || len(task.Tags) != 1 {
			t.Fatalf("edited task = %+v", task.TaskCard)
		}
		if c := task.Project.TaskCounts; c.Total != 5 || c.Done != 1 {
			t.Fatalf("counts after the edit = %+v, want 1 of 5 done", c)
		}
		if _, err := env.Store.UpdateProfile(ctx, "bob", domain.ProfileInput{Name: "Bob"}); err != nil {
			t.Fatal(err)
		}
		added, err := client.AddMember(ctx, c, p.Id, "bob")
		if err != nil || len(added.AddProjectMember.Members) != 2 {
			t.Fatalf("AddMember: %+v, %v", added, err)
		}
		removed, err := client.RemoveMember(ctx, c, p.Id, "bob")
		if err != nil || len(removed.RemoveProjectMember.Members) != 1 {
			t.Fatalf("RemoveMember: %+v, %v", removed, err)
		}
		board, err := client.ProjectBoard(ctx, c, p.Id)
		if err != nil || board.Project.TaskCounts.Done != 1 || len(board.Project.Members) != 1 {
			t.Fatalf("ProjectBoard: %+v, %v", board, err)
		}
	})

	t.Run("a stale expectedVersion is a CONFLICT", func(t *testing.T) {
		moved, err := client.MoveTask(ctx, c, created[1], client.TaskStatusInProgress, 1)
		if err != nil {
			t.Fatalf("MoveTask: %v", err)
		}
		if moved.UpdateTask.Status != client.TaskStatusInProgress || moved.UpdateTask.Version != 2 {
			t.Fatalf("moved = %+v", moved.UpdateTask.TaskCard)
		}
		_, err = client.MoveTask(ctx, c, created[1], client.TaskStatusDone, 1)
		if got := codes(err); !slices.Equal(got, []string{"CONFLICT"}) {
			t.Fatalf("stale move: error %v, codes %v; want one CONFLICT", err, got)
		}
		var list gqlerror.List
		if !errors.As(err, &list) {
			t.Fatalf("the error is a %T, not genqlient's gqlerror.List", err)
		}
		res, err := client.TasksByTag(ctx, c, "web", 5, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.TasksByTag.Edges {
			if n := e.Node; n.Id == created[1] && (n.Status != client.TaskStatusInProgress || n.Version != 2) {
				t.Fatalf("the refused move changed the task: %+v", n.TaskCard)
			}
		}
	})

	t.Run("a deleted task answers its id and is gone", func(t *testing.T) {
		res, err := client.DeleteTask(ctx, c, created[0])
		if err != nil || res.DeleteTask != created[0] {
			t.Fatalf("DeleteTask: %+v, %v", res, err)
		}
		board, err := client.ProjectTasks(ctx, c, p.Id, ptr(10), nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range board.Project.Tasks.Edges {
			if e.Node.Id == created[0] {
				t.Fatalf("the deleted task is still listed")
			}
		}
	})
}
