package bench

import (
	"testing"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// build makes the dataset at scale without a table (ids need only the store's
// id generator).
func build(tb testing.TB, scale int) (*dynamo.Dataset, *Fixture) {
	tb.Helper()
	return BuildDataset(dynamo.New(nil, "unused"), scale)
}

func TestDataset(t *testing.T) {
	d1, f1 := build(t, 1)
	t.Run("scale multiplies every count", func(t *testing.T) {
		for _, scale := range []int{2, 4} {
			_, f := build(t, scale)
			got := []int{f.Users, f.Projects, f.Members, f.Tasks, f.TagLinks, f.Comments}
			one := []int{f1.Users, f1.Projects, f1.Members, f1.Tasks, f1.TagLinks, f1.Comments}
			for i := range got {
				if got[i] != scale*one[i] {
					t.Errorf("%d×: counts %v, want %d × %v", scale, got, scale, one)
					break
				}
			}
		}
	})
	t.Run("the viewer is a member of exactly ten projects, owner of three", func(t *testing.T) {
		_, f := build(t, 4) // other blocks must not add any
		d, _ := build(t, 4)
		member, owner := 0, 0
		for _, m := range d.Members {
			if m.UserID == f.Viewer {
				member++
				if m.Role == domain.RoleOwner {
					owner++
				}
			}
		}
		if member != ViewerProjects || owner != 3 {
			t.Errorf("viewer in %d projects (owner of %d), want %d (3)", member, owner, ViewerProjects)
		}
	})
	t.Run("it is realistic: tens of projects, hundreds of tasks, 0-4 tags, several comments, every kind of due date", func(t *testing.T) {
		if f1.Projects < 10 || f1.Tasks < 200 || f1.Comments < 2*f1.Tasks {
			t.Errorf("1× is too small: %v", f1)
		}
		var past, future, none, done, unassigned int
		today := domain.DateOf(Now)
		for _, task := range d1.Tasks {
			if len(task.Tags) > 4 {
				t.Errorf("task %s has %d tags", task.ID, len(task.Tags))
			}
			switch {
			case task.DueDate == nil:
				none++
			case task.DueDate.String() < today.String():
				past++
			default:
				future++
			}
			if task.Status == domain.StatusDone {
				done++
			}
			if task.AssigneeID == nil {
				unassigned++
			}
		}
		for name, n := range map[string]int{"past due": past, "future due": future, "no due date": none, "done": done, "unassigned": unassigned} {
			if n < f1.Tasks/10 {
				t.Errorf("only %d of %d tasks are %s", n, f1.Tasks, name)
			}
		}
	})
	t.Run("the fixture names a full task page and a task with many comments", func(t *testing.T) {
		tasks, comments := 0, 0
		for _, task := range d1.Tasks {
			if task.ProjectID == f1.ProjectID {
				tasks++
			}
		}
		for _, c := range d1.Comments {
			if c.TaskID == f1.TaskID {
				comments++
			}
		}
		if tasks <= 20 || comments < 5 {
			t.Errorf("fixture project has %d tasks (want > 20), task has %d comments (want ≥ 5)", tasks, comments)
		}
	})
}
