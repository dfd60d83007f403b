package graph

import (
	"context"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// Fetch functions of the loaders whose lists need the viewer's visibility
// checked on the way (the others are in newLoaders), and the loads of many
// objects at once that they share.

// fetchProjectsOfUser reads a page of a user's projects: those that exist
// and, for another user, that the viewer is a member of too.
func (l *Loaders) fetchProjectsOfUser(ctx context.Context, k pageKey) (*domain.Conn[*domain.Project], error) {
	keep := func(ctx context.Context, ms []*domain.Member) ([]bool, error) {
		ids := make([]string, len(ms))
		for i, m := range ms {
			ids[i] = m.ProjectID
			l.objects.Prime(ctx, dynamo.MemberRef(m.ProjectID, m.UserID), m)
		}
		if ahead, ok := l.projectsAhead.Load(k); ok {
			ahead.(func(context.Context, []string))(ctx, ids) // with the visibility check's batch
		}
		for _, id := range ids { // the page's projects join the visibility check's batch
			l.objects.Load(ctx, dynamo.ProjectRef(id))
		}
		return l.visibleProjects(ctx, ids)
	}
	c, err := l.store.ProjectsOfUser(ctx, k.id, k.page(), keep)
	if err != nil {
		return nil, err
	}
	refs := make([]dynamo.Ref, len(c.Items))
	for i, m := range c.Items {
		refs[i] = dynamo.ProjectRef(m.ProjectID)
	}
	items, err := loadAll[*domain.Project](ctx, l, refs)
	return domain.ConnOf(c, items), err
}

// loadAll loads objects of one type, all in one batch.
func loadAll[T any](ctx context.Context, l *Loaders, refs []dynamo.Ref) ([]T, error) {
	ths := make([]func() (T, error), len(refs))
	for i, r := range refs {
		ths[i] = load[T](ctx, l, r)
	}
	out := make([]T, len(refs))
	for i, th := range ths {
		var err error
		if out[i], err = th(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fetchTasksByTag reads a page of the tasks with a tag in the projects the
// viewer may see: one Query per project of the viewer, merged by due date;
// the tasks are the copies on their tag links. The visibility check of the
// tasks found reads their projects, and, when the page's nodes select their
// assignee, the assignees in the same batch: after the viewer's memberships
// and the Queries, one round trip.
func (l *Loaders) fetchTasksByTag(ctx context.Context, k pageKey) (*domain.Conn[*domain.Task], error) {
	if _, err := domain.NormalizeTag(k.id); err != nil {
		return nil, err
	}
	ids, err := l.ProjectIDsOfUser(ctx, l.viewer) // primes the viewer's memberships
	if err != nil {
		return nil, err
	}
	_, assignees := l.tagAssignees.Load(k)
	_, projects := l.taskProjects.Load(k)
	visible := func(ctx context.Context, tasks []*domain.Task) ([]bool, error) {
		if assignees {
			for _, t := range tasks {
				if t.AssigneeID != nil {
					l.objects.Load(ctx, dynamo.UserRef(*t.AssigneeID)) // joins the visibility check's batch
				}
			}
		}
		return l.visibleTasks(ctx, tasks)
	}
	// The page's tasks are read with what their visibility check and their
	// assignees need, in one batch.
	read := func(ctx context.Context, named []dynamo.Tagged) ([]*domain.Task, error) {
		refs := make([]dynamo.Ref, len(named))
		for i, n := range named {
			refs[i] = dynamo.TaskRef(n.TaskID)
			if projects { // a project { id name } is its copy on the profile (TaskProject)
				l.objects.Load(ctx, dynamo.ProjectRef(n.ProjectID))
			}
			if assignees && n.AssigneeID != "" {
				l.objects.Load(ctx, dynamo.UserRef(n.AssigneeID))
			}
		}
		return loadSome[domain.Task](ctx, l, refs)
	}
	return l.primeTasks(ctx)(l.store.TasksByTag(ctx, k.id, ids, k.page(), visible, read))
}

// loadSome is loadAll with missing objects as nil.
func loadSome[T any](ctx context.Context, l *Loaders, refs []dynamo.Ref) ([]*T, error) {
	ths := make([]func() (*T, error), len(refs))
	for i, r := range refs {
		ths[i] = load[*T](ctx, l, r)
	}
	out := make([]*T, len(refs))
	for i, th := range ths {
		var err error
		if out[i], err = notFoundAsNil(th()); err != nil {
			return nil, err
		}
	}
	return out, nil
}
