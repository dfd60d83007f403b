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
	return &domain.Conn[*domain.Project]{Items: items, Cursors: c.Cursors, HasNext: c.HasNext}, err
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
// viewer may see: one Query per project of the viewer, merged by due date.
// The projects' own items are read alongside the Queries (their visibility
// is checked on the tasks found, so no round trip waits for it).
func (l *Loaders) fetchTasksByTag(ctx context.Context, k pageKey) (*domain.Conn[*domain.Task], error) {
	if _, err := domain.NormalizeTag(k.id); err != nil {
		return nil, err
	}
	ids, err := l.ProjectIDsOfUser(ctx, l.viewer) // primes the viewer's memberships
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		l.objects.Load(ctx, dynamo.ProjectRef(id))
	}
	visible := func(ctx context.Context, taskIDs []string) ([]bool, error) {
		refs := make([]dynamo.Ref, len(taskIDs))
		for i, id := range taskIDs {
			refs[i] = dynamo.TaskRef(id)
		}
		tasks, err := loadSome[domain.Task](ctx, l, refs)
		if err != nil {
			return nil, err
		}
		var projects []string
		for _, t := range tasks {
			if t != nil {
				projects = append(projects, t.ProjectID)
			}
		}
		vis, err := l.visibleProjects(ctx, projects)
		if err != nil {
			return nil, err
		}
		ok := make([]bool, len(tasks))
		for i, t := range tasks {
			if t != nil {
				ok[i], vis = vis[0], vis[1:]
			}
		}
		return ok, nil
	}
	c, err := l.store.TaskIDsByTag(ctx, k.id, ids, k.page(), visible)
	if err != nil {
		return nil, err
	}
	refs := make([]dynamo.Ref, len(c.Items))
	for i, id := range c.Items {
		refs[i] = dynamo.TaskRef(id)
	}
	items, err := loadAll[*domain.Task](ctx, l, refs)
	return &domain.Conn[*domain.Task]{Items: items, Cursors: c.Cursors, HasNext: c.HasNext}, err
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
