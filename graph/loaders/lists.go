package loaders

import (
	"context"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/policy"
)

// The loaders of the lists, by the name of their batch spans and metrics.
// Those that do not depend on the viewer are origin's (its dispatch and
// clock), whoever asks.

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

func (l *Loaders) projectsOfUserLoader() *loader[projectsKey, *domain.Conn[*domain.Project]] {
	return l.projectsOfUser.get(func() *loader[projectsKey, *domain.Conn[*domain.Project]] {
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

func (l *Loaders) tasksByTagLoader() *loader[tagPageKey, *domain.Conn[*domain.Task]] {
	return l.tasksByTag.get(func() *loader[tagPageKey, *domain.Conn[*domain.Task]] {
		return each(l, "tasksByTag", l.fetchTasksByTag)
	})
}

// The fetch functions of the lists.

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
	var c *domain.Conn[*domain.Task]
	var err error
	if k.listed { // partial tasks: not put into the point reads' cache
		c, err = l.store.TasksOfProjectListed(ctx, k.id, st, k.page())
	} else {
		c, err = l.primeTasks(ctx)(l.store.TasksOfProject(ctx, k.id, st, k.page()))
	}
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

// fetchTasksByTag reads a page of the tasks with a tag in the projects the
// viewer may see: one Query per project of the viewer, merged by due date;
// the tasks are the copies on their tag links. The visibility check of the
// tasks found reads their projects, and, when the page's nodes select their
// assignee, the assignees in the same batch: after the viewer's memberships
// and the Queries, one round trip.
func (l *Loaders) fetchTasksByTag(ctx context.Context, k tagPageKey) (*domain.Conn[*domain.Task], error) {
	if _, err := domain.NormalizeTag(k.id); err != nil {
		return nil, err
	}
	u, err := l.profileOf(ctx, l.viewer) // the visibility check's fact, read first
	if err != nil {
		return nil, err
	}
	ids := policy.ProjectsSeen(u)
	_, assignees := l.tagAssignees.Load(k.pageKey)
	_, projects := l.taskProjects.Load(k.pageKey)
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
	// assignees need, in one batch; those whose index entry lists all the
	// page selects (k.listed) are taken from it, not read, and not put into
	// the point reads' cache (they are partial).
	read := func(ctx context.Context, named []dynamo.Tagged) ([]*domain.Task, error) {
		var refs []dynamo.Ref
		for _, n := range named {
			if !k.listed || n.Listed == nil {
				refs = append(refs, dynamo.TaskRef(n.TaskID))
			}
			if projects { // a project { id name } is its copy on the profile (TaskProject)
				l.objects.Load(ctx, dynamo.ProjectRef(n.ProjectID))
			}
			if assignees && n.AssigneeID != "" {
				l.objects.Load(ctx, dynamo.UserRef(n.AssigneeID))
			}
		}
		got, err := loadSome[domain.Task](ctx, l, refs)
		if err != nil {
			return nil, err
		}
		tasks := make([]*domain.Task, len(named))
		for i, n := range named {
			if k.listed && n.Listed != nil {
				tasks[i] = n.Listed
			} else {
				tasks[i], got = got[0], got[1:]
			}
		}
		return tasks, nil
	}
	return l.store.TasksByTag(ctx, k.id, ids, k.page(), visible, read)
}

// listedFields are the fields of a task its tag index entry answers
// (dynamo.Tagged.Listed): a page of tasksByTag that selects no other on
// its nodes reads no task item.
var listedFields = map[string]bool{"id": true, "title": true, "dueDate": true, "project": true, "assignee": true, "__typename": true}

// taskListFields are the fields of a task its GSI4 entry answers
// (dynamo.Store.TasksOfProjectListed): a page of a project's tasks that
// selects no other on its nodes reads the entries, not the items.
var taskListFields = map[string]bool{"id": true, "title": true, "status": true, "dueDate": true, "project": true,
	"assignee": true, "tags": true, "comments": true, "commentCount": true, "__typename": true}

// tagPageKey is a page of tasksByTag, and whether its nodes select only
// listedFields (two selections of one page are two keys: one has partial
// tasks).
type tagPageKey struct {
	pageKey
	listed bool
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
