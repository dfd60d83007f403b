package loaders

import (
	"context"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// The loaders of the lists, by the name of their batch spans and metrics.
// Those that do not depend on the viewer are origin's (its dispatch and
// clock), whoever asks.

func (l *Loaders) projectIDsOfUserLoader() *loader[string, []string] {
	o := l.origin
	return o.projectIDsOfUser.get(func() *loader[string, []string] {
		return each(o, "projectIDsOfUser", o.fetchProjectIDsOfUser)
	})
}

func (l *Loaders) membersOfLoader() *loader[string, []*domain.Member] {
	o := l.origin
	return o.membersOf.get(func() *loader[string, []*domain.Member] { return each(o, "membersOf", o.fetchMembersOf) })
}

func (l *Loaders) tasksOfProjectLoader() *loader[projectTasksKey, *domain.Conn[*domain.Task]] {
	o := l.origin
	return o.tasksOfProject.get(func() *loader[projectTasksKey, *domain.Conn[*domain.Task]] {
		return each(o, "tasksOfProject", o.fetchTasksOfProject)
	})
}

func (l *Loaders) commentsOfLoader() *loader[pageKey, *domain.Conn[*domain.Comment]] {
	o := l.origin
	return o.commentsOf.get(func() *loader[pageKey, *domain.Conn[*domain.Comment]] {
		return newLoader(o.cfg, o.levels, "commentsOf", o.fetchCommentsOf)
	})
}

func (l *Loaders) projectsOfUserLoader() *loader[pageKey, *domain.Conn[*domain.Project]] {
	return l.projectsOfUser.get(func() *loader[pageKey, *domain.Conn[*domain.Project]] {
		return each(l, "projectsOfUser", l.fetchProjectsOfUser)
	})
}

func (l *Loaders) assignedToLoader() *loader[pageKey, *domain.Conn[*domain.Task]] {
	return l.assignedTo.get(func() *loader[pageKey, *domain.Conn[*domain.Task]] {
		return each(l, "assignedTo", l.fetchAssignedTo)
	})
}

func (l *Loaders) overdueOfLoader() *loader[overdueKey, *domain.Conn[*domain.Task]] {
	return l.overdueOf.get(func() *loader[overdueKey, *domain.Conn[*domain.Task]] {
		return each(l, "overdueOf", l.fetchOverdueOf)
	})
}

func (l *Loaders) tasksByTagLoader() *loader[pageKey, *domain.Conn[*domain.Task]] {
	return l.tasksByTag.get(func() *loader[pageKey, *domain.Conn[*domain.Task]] {
		return each(l, "tasksByTag", l.fetchTasksByTag)
	})
}

// The fetch functions of the lists.

func (l *Loaders) fetchProjectIDsOfUser(ctx context.Context, id string) ([]string, error) {
	ms, err := l.store.MembershipsOfUser(ctx, id)
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ProjectID
		l.objects.Prime(ctx, dynamo.MemberRef(m.ProjectID, m.UserID), m)
	}
	return ids, err
}

func (l *Loaders) fetchMembersOf(ctx context.Context, id string) ([]*domain.Member, error) {
	ms, err := l.store.MembersOf(ctx, id)
	for _, m := range ms {
		l.objects.Prime(ctx, dynamo.MemberRef(m.ProjectID, m.UserID), m)
	}
	return ms, err
}

func (l *Loaders) fetchTasksOfProject(ctx context.Context, k projectTasksKey) (*domain.Conn[*domain.Task], error) {
	var st *domain.TaskStatus
	if k.status != "" {
		st = &k.status
	}
	c, err := l.primeTasks(ctx)(l.store.TasksOfProject(ctx, k.id, st, k.page()))
	if a, ok := l.commentsAhead.Load(k); ok && c != nil {
		for _, t := range c.Items {
			l.threads.LoadOrStore(t.ID, dynamo.CommentsAsk{TaskID: t.ID, ProjectID: t.ProjectID, CommentCount: t.CommentCount})
			l.commentsOfLoader().Load(ctx, pageKeyOf(t.ID, a.(pageArgs)))
		}
	}
	return c, err
}

// fetchCommentsOf reads a batch of pages of comments, those of tasks whose
// items were read (threads) with what they said.
func (l *Loaders) fetchCommentsOf(ctx context.Context, keys []pageKey) []result[*domain.Conn[*domain.Comment]] {
	asks := make([]dynamo.CommentsAsk, len(keys))
	for i, k := range keys {
		asks[i] = dynamo.CommentsAsk{TaskID: k.id}
		if v, ok := l.threads.Load(k.id); ok {
			asks[i] = v.(dynamo.CommentsAsk)
		}
		asks[i].Page = k.page()
	}
	conns, errs := l.store.CommentsOfTasks(ctx, asks)
	res := make([]result[*domain.Conn[*domain.Comment]], len(keys))
	for i := range keys {
		res[i] = result[*domain.Conn[*domain.Comment]]{val: conns[i], err: errs[i]}
	}
	return res
}

func (l *Loaders) fetchAssignedTo(ctx context.Context, k pageKey) (*domain.Conn[*domain.Task], error) {
	return l.primeTasks(ctx)(l.store.TasksAssignedTo(ctx, k.id, k.page(), l.visibleTasksOf(k)))
}

func (l *Loaders) fetchOverdueOf(ctx context.Context, k overdueKey) (*domain.Conn[*domain.Task], error) {
	asOf, err := domain.ParseDate(k.asOf)
	if err != nil {
		return nil, err
	}
	return l.primeTasks(ctx)(l.store.OverdueTasks(ctx, k.id, asOf, k.page(), l.visibleTasksOf(k.pageKey)))
}

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

// primeTasks puts the tasks of a page into the point-read cache.
func (l *Loaders) primeTasks(ctx context.Context) func(*domain.Conn[*domain.Task], error) (*domain.Conn[*domain.Task], error) {
	return func(c *domain.Conn[*domain.Task], err error) (*domain.Conn[*domain.Task], error) {
		if c != nil {
			for _, t := range c.Items {
				l.objects.Prime(ctx, dynamo.TaskRef(t.ID), t)
			}
		}
		return c, err
	}
}
