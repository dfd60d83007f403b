package loaders

import (
	"context"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// The lists' loaders, one row each, named by their access pattern: the
// key a field's arguments make, the read, the field it serves below an
// object looked up by id and whether it is read ahead with it (List). A new
// list is a row here and its resolver's one line, Load:
//
//	return taskConn(loaders.TasksOfProject.Load(ctx, For(ctx), obj.ID, loaders.Args{…}))
var (
	// MembersOf: a project's memberships.
	MembersOf = register(&List[string, []*domain.Member]{name: "membersOf", under: "Project.members",
		key: byID, fetch: (*Loaders).fetchMembersOf})
	// TasksOfProject: a page of a project's tasks by due date, of one
	// status or all (read ahead with the first comments of each when its
	// nodes select them).
	TasksOfProject = register(&List[projectTasksKey, taskPage]{name: "tasksOfProject", under: "Project.tasks",
		key: tasksOfProjectKey, fetch: (*Loaders).fetchTasksOfProject, ahead: commentsAheadOf})
	// CommentsOf: a page of a task's comments, oldest first; a batch's
	// threads read together when their tasks' items make it pay.
	CommentsOf = register(&List[pageKey, *domain.Conn[*domain.Comment]]{name: "commentsOf", under: "Task.comments",
		key: commentsKey, batch: (*Loaders).fetchCommentsOf, ahead: authorsAhead})
	// ProjectsOfUser: a page of a user's projects the viewer may see
	// (copies.go).
	ProjectsOfUser = register(&List[projectsKey, *domain.Conn[*domain.Project]]{name: "projectsOfUser", under: "User.projects", own: true,
		key: projectsKeyOf, fetch: (*Loaders).fetchProjectsOfUser, ahead: projectListsAhead})
	// AssignedTo: a page of a user's assigned tasks the viewer may see.
	AssignedTo = register(&List[pageKey, taskPage]{name: "assignedTo", under: "User.assignedTasks", own: true,
		key: userTasksKey, fetch: (*Loaders).fetchAssignedTo, ahead: waited[pageKey, taskPage]})
	// OverdueOf: a page of a user's tasks overdue as of a date (null:
	// today) the viewer may see.
	OverdueOf = register(&List[overdueKey, taskPage]{name: "overdueOf", under: "User.overdueTasks", own: true,
		key: overdueKeyOf, fetch: (*Loaders).fetchOverdueOf, ahead: waited[overdueKey, taskPage]})
	// TasksByTag: a page of the tasks with a tag in the viewer's projects
	// (tagged.go).
	TasksByTag = register(&List[tagPageKey, taskPage]{name: "tasksByTag", under: "Tag.tasks", own: true,
		key: tagPageKeyOf, fetch: (*Loaders).fetchTasksByTag,
		notAhead: "keyed by the viewer's projects, which the tag's id does not give: read when resolved"})
	// changesOf: a read of a project's change log, a sync page's
	// (ChangesOf, changes.go).
	changesOf = register(&List[ChangesKey, Changes]{name: "changesOf", own: true, fetch: (*Loaders).fetchChangesOf})
)

// taskPage is a page of tasks.
type taskPage = *domain.Conn[*domain.Task]

// byID is the key of a list that takes no arguments: its owner's id.
func byID(_ *Loaders, id string, _ Args, _ *selection) string { return id }

// byPage is the key of a page of a list with no arguments but the page's
// (what a new list's row most often names).
func byPage(_ *Loaders, id string, a Args, _ *selection) pageKey { return pageKeyOf(id, a.page()) }

// The keys that note what a page selects, and the reads ahead that do more
// than load.

func tasksOfProjectKey(_ *Loaders, id string, a Args, s *selection) projectTasksKey {
	k := projectTasksKeyOf(id, a.Status, a.page())
	if s != nil {
		k.listed = onlyFields(s.Nodes(), taskListFields) // (the resolver's: deferred fields too)
	}
	return k
}

// taskListFields are the fields of a task its GSI4 entry answers
// (dynamo.Store.TasksOfProjectListed): a page of a project's tasks that
// selects no other on its nodes reads the entries, not the items.
var taskListFields = map[string]bool{"id": true, "title": true, "status": true, "dueDate": true, "project": true,
	"assignee": true, "tags": true, "comments": true, "commentCount": true, "__typename": true}

// commentsAheadOf reads a page of a project's tasks ahead and, when its
// nodes select their comments, the comments' first pages with it
// (fetchTasksOfProject).
func commentsAheadOf(ctx context.Context, l *Loaders, s *selection, k projectTasksKey, load func() func() (taskPage, error)) func() {
	for _, nf := range s.Nodes() {
		// (Not under @defer: a deferred part must not be ready
		// before the part it is in.)
		if nf.Name == "comments" && nf.ObjectDefinition != nil && nf.ObjectDefinition.Name == "Task" && !l.deps.Defers(s.oc, s.f.SelectionSet) {
			l.origin.commentsAhead.Store(k, argsOf(s.oc, nf).page())
		}
	}
	load()
	return nil
}

// commentsKey is a page of a task's comments; the resolver's Args.Of, the
// task, tells the fetch what its item says of them (threads).
func commentsKey(l *Loaders, id string, a Args, _ *selection) pageKey {
	if t, ok := a.Of.(*domain.Task); ok && t != nil {
		l.origin.threads.LoadOrStore(t.ID, dynamo.CommentsAsk{TaskID: t.ID, ProjectID: t.ProjectID, CommentCount: t.CommentCount})
	}
	return pageKeyOf(id, a.page())
}

// authorsAhead reads a task's comments ahead; when they select their
// authors, the authors join the task's visibility check: the task's lookup
// waits for the comments, read beside the task (no round trip more), and
// asks for their authors just before its check, so that both are one
// batch however far apart the two answers arrive (Loaders.task).
func authorsAhead(ctx context.Context, l *Loaders, s *selection, _ pageKey, load func() func() (*domain.Conn[*domain.Comment], error)) func() {
	th := load()
	if !selectsNode(s.oc, s.f, "author") {
		return nil
	}
	return func() {
		if c, err := th(); err == nil {
			for _, cm := range c.Items {
				l.objects.Load(ctx, dynamo.UserRef(cm.AuthorID))
			}
		}
	}
}

// projectsKeyOf is a page of a user's projects, answered by copies when
// its nodes select only what they hold.
func projectsKeyOf(_ *Loaders, id string, a Args, s *selection) projectsKey {
	return projectsKey{pageKeyOf(id, a.page()), s != nil && onlyCopyFields(s.Nodes())}
}

// projectListsAhead reads the viewer's projects ahead; the lists their
// nodes select (members, tasks) start as soon as the page is known, with
// the projects' own reads (fetchProjectsOfUser). The lookup waits for it.
func projectListsAhead(ctx context.Context, l *Loaders, s *selection, k projectsKey, load func() func() (*domain.Conn[*domain.Project], error)) func() {
	if nodes := s.Nodes(); k.id == l.viewer && len(nodes) > 0 {
		l.projectsAhead.Store(k, func(ctx context.Context, ids []string) {
			for _, pid := range ids {
				l.prefetchFields(ctx, pid, nodes)
			}
		})
	}
	return waitFor(load())
}

// userTasksKey is a page of a user's tasks, noting whether its nodes
// select their project (noteTaskProjects).
func userTasksKey(l *Loaders, id string, a Args, s *selection) pageKey {
	k := pageKeyOf(id, a.page())
	if s != nil {
		l.noteTaskProjects(s.oc, s.f, k)
	}
	return k
}

func overdueKeyOf(l *Loaders, id string, a Args, s *selection) overdueKey {
	k := overdueKey{pageKey: pageKeyOf(id, a.page()), asOf: l.Today().String()}
	if a.AsOf != nil {
		k.asOf = a.AsOf.String()
	}
	if s != nil {
		l.noteTaskProjects(s.oc, s.f, k.pageKey)
	}
	return k
}

// The reads.

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
			CommentsOf.loader(l).Load(ctx, pageKeyOf(t.ID, a.(pageArgs)))
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
