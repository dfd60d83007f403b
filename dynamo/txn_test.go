package dynamo

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/taskgraph/taskgraph/domain"
)

func TestCommitMapsFailedConditions(t *testing.T) {
	ts := newTestStore(t)
	b := ts.NewDataset(storeTestNow)
	owner := b.User("owner", "Owner", "")
	member := b.User("member", "Member", "")
	outsider := b.User("outsider", "Outsider", "")
	p := b.Project("P", "", owner, member)
	other := b.Project("Other", "", outsider)
	ts.mustImport(t, &b.D)
	ctx := context.Background()
	missingProject := domain.ProjectIDOf(freshULIDs(t, 1)[0])

	cases := []struct {
		name string
		do   func() error
		want string
	}{
		{"CreateTask in a missing project is ENOTFOUND", func() error {
			_, err := ts.CreateTask(ctx, "owner", domain.TaskInput{ProjectID: missingProject, Title: "t"})
			return err
		}, domain.ENOTFOUND},
		{"CreateTask by a non-member is ENOTFOUND", func() error {
			_, err := ts.CreateTask(ctx, "outsider", domain.TaskInput{ProjectID: p.ID, Title: "t"})
			return err
		}, domain.ENOTFOUND},
		{"CreateTask assigned to a user who is no member is EINVALID", func() error {
			_, err := ts.CreateTask(ctx, "owner", domain.TaskInput{ProjectID: p.ID, Title: "t", AssigneeID: aws.String(outsider.ID)})
			return err
		}, domain.EINVALID},
		{"CreateTask assigned to a user who does not exist is EINVALID", func() error {
			_, err := ts.CreateTask(ctx, "owner", domain.TaskInput{ProjectID: p.ID, Title: "t", AssigneeID: aws.String("nobody")})
			return err
		}, domain.EINVALID},
		{"CreateTask by a non-member assigning a member is ENOTFOUND", func() error {
			_, err := ts.CreateTask(ctx, "outsider", domain.TaskInput{ProjectID: p.ID, Title: "t", AssigneeID: aws.String(member.ID)})
			return err
		}, domain.ENOTFOUND},
		{"CreateTask assigning oneself in another's project is ENOTFOUND", func() error {
			_, err := ts.CreateTask(ctx, "outsider", domain.TaskInput{ProjectID: p.ID, Title: "t", AssigneeID: aws.String(outsider.ID)})
			return err
		}, domain.ENOTFOUND},
		{"CreateProject without a profile is ENOTFOUND", func() error {
			_, err := ts.CreateProject(ctx, "no-profile", domain.ProjectInput{Name: "n"})
			return err
		}, domain.ENOTFOUND},
		{"AddProjectMember of a user without a profile is ENOTFOUND", func() error {
			_, err := ts.AddProjectMember(ctx, "owner", p.ID, "nobody")
			return err
		}, domain.ENOTFOUND},
		{"AddProjectMember of a member again succeeds and changes nothing", func() error {
			_, err := ts.AddProjectMember(ctx, "owner", p.ID, member.ID)
			return err
		}, ""},
		{"AddProjectMember by a member is EFORBIDDEN", func() error {
			_, err := ts.AddProjectMember(ctx, "member", p.ID, outsider.ID)
			return err
		}, domain.EFORBIDDEN},
		{"AddComment to a task in a missing project is ENOTFOUND", func() error {
			_, err := ts.AddComment(ctx, "owner", domain.CommentInput{TaskID: domain.TaskIDOf(freshULIDs(t, 1)[0]), Body: "b"})
			return err
		}, domain.ENOTFOUND},
		{"DeleteProject by a non-member is ENOTFOUND", func() error {
			return ts.DeleteProject(ctx, "owner", other.ID)
		}, domain.ENOTFOUND},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := ts.dump(t)
			err := c.do()
			wantCode(t, c.name, err, c.want)
			if after := ts.dump(t); after != before {
				t.Errorf("the table changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}

	t.Run("a failed condition reports the error of its own action", func(t *testing.T) {
		errA, errB := domain.Errorf(domain.EINVALID, "A"), domain.Errorf(domain.EFORBIDDEN, "B")
		pu := ulidOf(p.ID)
		for _, c := range []struct {
			name  string
			build func(*txn)
			want  error
			code  string
		}{
			{"second action fails", func(x *txn) {
				x.check(ts.table, projectKey(pu), exists(), errB)
				x.check(ts.table, userKey("nobody"), exists(), errA)
			}, errA, ""},
			{"third action fails", func(x *txn) {
				x.check(ts.table, projectKey(pu), exists(), errA)
				x.check(ts.table, memberKey(pu, "member"), exists(), errA)
				x.put(ts.table, userToItem(&domain.User{ID: "owner", Name: "X", CreatedAt: storeTestNow}, 0), ptr(absent()), errB)
			}, errB, ""},
			{"a failed action without an error is ECONFLICT", func(x *txn) {
				x.check(ts.table, projectKey(pu), exists(), errA)
				x.del(ts.table, userKey("owner"), ptr(absent()), nil)
			}, nil, domain.ECONFLICT},
		} {
			t.Run(c.name, func(t *testing.T) {
				before := ts.dump(t)
				var x txn
				c.build(&x)
				err := ts.commit(ctx, &x)
				if c.want != nil && err != c.want {
					t.Errorf("commit = %v, want %v", err, c.want)
				}
				if c.code != "" {
					wantCode(t, "commit", err, c.code)
				}
				if after := ts.dump(t); after != before {
					t.Error("the failed transaction changed the table")
				}
			})
		}
	})
	t.Run("CreateTask assigned to a member succeeds and bumps nothing else", func(t *testing.T) {
		task, err := ts.CreateTask(ctx, "owner", domain.TaskInput{ProjectID: p.ID, Title: " t ", AssigneeID: aws.String(member.ID),
			Tags: []string{"A", "a", " b"}})
		if err != nil {
			t.Fatal(err)
		}
		if task.Title != "t" || !slices.Equal(task.Tags, []string{"a", "b"}) || *task.AssigneeID != "member" || task.Version != 1 {
			t.Errorf("task %s", show(task))
		}
		vals, errs := ts.Get(ctx, []Ref{TaskRef(task.ID)})
		checkGot(t, 0, TaskRef(task.ID), vals[0], errs[0], task)
	})
}
