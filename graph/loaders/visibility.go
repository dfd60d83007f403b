package loaders

import (
	"context"
	"slices"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/policy"
)

// Visibility: a project, and everything under it, is visible to its
// members while the project exists (policy.SeesProject, the one rule),
// which reads one fact: the viewer's profile, with its copies of its
// projects (dynamo/copies.go). It is a point read through the loaders, so
// checking any number of projects costs one key of a batch shared with
// the rest of the level, read as the operation reads (dynamo.Screen for a
// query: eventually consistent, 0.5 RCU). Who may see a user
// (policy.SeesUser) reads their profile beside the viewer's, in the same
// batch. This file reads the facts; the policy decides.

// visibleProjects reports, for each project id, whether the viewer may see
// it. Every check of a call joins one batch.
func (l *Loaders) visibleProjects(ctx context.Context, ids []string) ([]bool, error) {
	ok := make([]bool, len(ids))
	if len(ids) == 0 {
		return ok, nil
	}
	v, err := l.objects.Load(ctx, dynamo.UserRef(l.viewer))()
	if err != nil && !domain.IsNotFound(err) {
		return nil, err
	}
	viewer, _ := v.(*domain.User)
	for i, id := range ids {
		ok[i] = policy.SeesProject(viewer, id)
	}
	return ok, nil
}

func (l *Loaders) canSeeProject(ctx context.Context, id string) (bool, error) {
	ok, err := l.visibleProjects(ctx, []string{id})
	if err != nil {
		return false, err
	}
	return ok[0], nil
}

// visibleTasks keeps the tasks whose project the viewer may see.
func (l *Loaders) visibleTasks(ctx context.Context, tasks []*domain.Task) ([]bool, error) {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ProjectID
	}
	return l.visibleProjects(ctx, ids)
}

// visibleTasksOf is visibleTasks for the page k of a user's tasks: when
// its nodes select their project (taskProjects), the projects join the
// check's batch.
func (l *Loaders) visibleTasksOf(k pageKey) func(context.Context, []*domain.Task) ([]bool, error) {
	return func(ctx context.Context, tasks []*domain.Task) ([]bool, error) {
		if _, ok := l.taskProjects.Load(k); ok {
			for _, t := range tasks {
				l.objects.Load(ctx, dynamo.ProjectRef(t.ProjectID))
			}
		}
		return l.visibleTasks(ctx, tasks)
	}
}

// canSeeUser reports whether the viewer may see the user id
// (visibleUsers, policy.SeesUser).
func (l *Loaders) canSeeUser(ctx context.Context, id string) (bool, error) {
	ok, err := l.visibleUsers(ctx, []string{id})
	if err != nil {
		return false, err
	}
	return ok[0], nil
}

// visibleUsers reports, for each user id, whether the viewer may see them
// (policy.SeesUser): their profiles, which the answer reads anyway, are
// read in one batch with the viewer's (which visibleProjects reads too).
func (l *Loaders) visibleUsers(ctx context.Context, ids []string) ([]bool, error) {
	mine := l.objects.Load(ctx, dynamo.UserRef(l.viewer)) // the viewer's, in the same batch
	users, err := l.Profiles(ctx, ids)
	if err != nil {
		return nil, err
	}
	var viewer *domain.User
	if slices.ContainsFunc(users, func(u *domain.User) bool { return u != nil }) { // someone else's profile to weigh
		v, err := mine()
		if err != nil && !domain.IsNotFound(err) {
			return nil, err
		}
		viewer, _ = v.(*domain.User)
	}
	out := make([]bool, len(ids))
	for i, id := range ids {
		out[i] = policy.SeesUser(l.viewer, viewer, id, users[i])
	}
	return out, nil
}

// Profiles reads the profiles of the users ids through the level's
// batch, nil for the viewer's own (not read as theirs) and for a user
// without one.
func (l *Loaders) Profiles(ctx context.Context, ids []string) ([]*domain.User, error) {
	theirs := make([]func() (any, error), len(ids))
	for i, id := range ids {
		if id != l.viewer {
			theirs[i] = l.objects.Load(ctx, dynamo.UserRef(id))
		}
	}
	users := make([]*domain.User, len(ids))
	for i, th := range theirs {
		if th == nil {
			continue
		}
		v, err := th()
		if err != nil && !domain.IsNotFound(err) {
			return nil, err
		}
		users[i], _ = v.(*domain.User)
	}
	return users, nil
}
