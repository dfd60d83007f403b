package dynamo

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
)

func TestImportRoundTrip(t *testing.T) {
	ts := newTestStore(t)
	b := ts.NewDataset(storeTestNow)
	withEmail := b.User("auth0|abc123", "Zoë Ångström 日本", "zoe@example.com")
	noEmail := b.User("9b2f7c1e-3a4d-4e5f-8a6b-7c8d9e0f1a2b", "No Email", "")
	withEmail.CreatedAt = storeTestNow.Add(-48*time.Hour + 7)
	described := b.Project("Described", "A description\nwith lines and \"quotes\"", withEmail, noEmail)
	bare := b.Project("Bare", "", noEmail)
	due := domain.DateOf(storeTestNow).AddDays(-400)
	full := b.Task(described, "Full", domain.StatusInProgress, &due, noEmail, "a", "b.c", "d-e_f")
	desc := "Some **markdown**\n\t- item"
	full.Description = &desc
	full.UpdatedAt = storeTestNow.Add(time.Hour + 1)
	full.Version = 7
	empty := b.Task(bare, "Empty", domain.StatusTodo, nil, nil)
	done := b.Task(described, "Done", domain.StatusDone, &due, withEmail, "z")
	c1 := b.Comment(full, withEmail, "💬 comment\nwith lines")
	c2 := b.Comment(empty, noEmail, strings.Repeat("x", domain.MaxTextLen))
	b.D.Members[0].JoinedAt = storeTestNow.Add(-time.Minute)
	ts.mustImport(t, &b.D)

	if noEmail.Email != nil || bare.Description != nil || empty.DueDate != nil || empty.AssigneeID != nil ||
		empty.Description != nil || len(empty.Tags) != 0 || empty.Tags == nil {
		t.Fatal("test set-up: the empty objects are not empty")
	}
	var refs []Ref
	var want []any
	for _, u := range b.D.Users {
		refs, want = append(refs, UserRef(u.ID)), append(want, u)
	}
	for _, p := range b.D.Projects {
		refs, want = append(refs, ProjectRef(p.ID)), append(want, p)
	}
	for _, m := range b.D.Members {
		refs, want = append(refs, MemberRef(m.ProjectID, m.UserID)), append(want, m)
	}
	for _, task := range []*domain.Task{full, empty, done} {
		refs, want = append(refs, TaskRef(task.ID)), append(want, task)
	}
	for _, c := range []*domain.Comment{c1, c2} {
		refs, want = append(refs, CommentRef(c.ID)), append(want, c)
	}
	vals, errs := ts.Get(context.Background(), refs)
	for i, r := range refs {
		t.Run(fmt.Sprintf("%T %s", want[i], r.ID+r.User), func(t *testing.T) {
			checkGot(t, i, r, vals[i], errs[i], want[i])
		})
	}
	t.Run("the task without tags reads back with an empty, non-nil tag list", func(t *testing.T) {
		got, ok := vals[slices.Index(refs, TaskRef(empty.ID))].(*domain.Task)
		if !ok || got.Tags == nil || len(got.Tags) != 0 || got.DueDate != nil || got.Description != nil || got.AssigneeID != nil {
			t.Errorf("got %s", show(got))
		}
	})
	t.Run("the user without email reads back with a nil email", func(t *testing.T) {
		got, ok := vals[slices.Index(refs, UserRef(noEmail.ID))].(*domain.User)
		if !ok || got.Email != nil {
			t.Errorf("got %s", show(got))
		}
	})
	t.Run("imported tasks appear in their lists", func(t *testing.T) {
		c, err := ts.TasksOfProject(context.Background(), described.ID, nil, domain.Page{First: 10})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(c.Items))
		for i, task := range c.Items {
			ids[i] = task.ID
		}
		sort.Strings(ids)
		want := []string{full.ID, done.ID}
		sort.Strings(want)
		if !slices.Equal(ids, want) {
			t.Errorf("tasks of %s = %v, want %v", described.Name, ids, want)
		}
	})
}
