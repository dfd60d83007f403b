package graph

import (
	"context"

	"github.com/taskgraph/taskgraph/dynamo"
)

// Visibility: a project, and everything under it, is visible to its
// members while the project exists. Both facts are point reads, so checking
// any number of projects costs one batched read.

// visibleProjects reports, for each project id, whether the viewer may see
// it. Every check of a call joins one batch.
func (l *Loaders) visibleProjects(ctx context.Context, ids []string) ([]bool, error) {
	type pair struct{ p, m func() (any, error) }
	ths := make([]pair, len(ids))
	for i, id := range ids {
		ths[i] = pair{l.objects.Load(ctx, dynamo.ProjectRef(id)), l.objects.Load(ctx, dynamo.MemberRef(id, l.viewer))}
	}
	ok := make([]bool, len(ids))
	for i, th := range ths {
		_, perr := th.p()
		_, merr := th.m()
		for _, err := range []error{perr, merr} {
			if err != nil && !dynamo.IsNotFound(err) {
				return nil, err
			}
		}
		ok[i] = perr == nil && merr == nil
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
func (l *Loaders) visibleTasks(ctx context.Context, tasks []*dynamo.Task) ([]bool, error) {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ProjectID
	}
	return l.visibleProjects(ctx, ids)
}

// notFoundAsNil turns ENOTFOUND into a nil result without error.
func notFoundAsNil[T any](v *T, err error) (*T, error) {
	if dynamo.IsNotFound(err) {
		return nil, nil
	}
	return v, err
}

// Project returns the project when the viewer may see it, else nil.
func (l *Loaders) Project(ctx context.Context, id string) (*dynamo.Project, error) {
	if _, err := dynamo.ParseProjectID(id); err != nil {
		return nil, err
	}
	l.prefetch(ctx, id)
	ok, err := l.canSeeProject(ctx, id)
	if !ok || err != nil {
		return nil, err
	}
	return notFoundAsNil(l.ProjectByID(ctx, id))
}

// Task returns the task when the viewer may see it, else nil.
func (l *Loaders) Task(ctx context.Context, id string) (*dynamo.Task, error) {
	if _, err := dynamo.ParseTaskID(id); err != nil {
		return nil, err
	}
	l.prefetch(ctx, id)
	t, err := notFoundAsNil(l.TaskByID(ctx, id))
	if t == nil || err != nil {
		return nil, err
	}
	if t.AssigneeID != nil && selects(ctx, "assignee") {
		l.objects.Load(ctx, dynamo.UserRef(*t.AssigneeID)) // joins the visibility check's batch
	}
	ok, err := l.canSeeProject(ctx, t.ProjectID)
	if !ok || err != nil {
		return nil, err
	}
	return t, nil
}

// Comment returns the comment when the viewer may see its task, else nil.
func (l *Loaders) Comment(ctx context.Context, id string) (*dynamo.Comment, error) {
	taskID, err := dynamo.ParseCommentID(id)
	if err != nil {
		return nil, err
	}
	cth := load[*dynamo.Comment](ctx, l, dynamo.CommentRef(id))
	t, err := l.Task(ctx, taskID) // read together with the comment
	c, cerr := notFoundAsNil(cth())
	if t == nil || err != nil || c == nil || cerr != nil {
		return nil, firstErr(err, cerr)
	}
	return c, nil
}

// User returns the user when it is the viewer or shares a project with the
// viewer, else nil.
func (l *Loaders) User(ctx context.Context, id string) (*dynamo.User, error) {
	if err := dynamo.ValidUserID(id); err != nil {
		return nil, err
	}
	l.prefetch(ctx, id)
	if id != l.viewer {
		theirs := l.projectIDsOfUser.Load(ctx, id)
		mine, err := l.ProjectIDsOfUser(ctx, l.viewer)
		if err != nil {
			return nil, err
		}
		ids, err := theirs()
		if err != nil {
			return nil, err
		}
		if ok, err := l.sharesProject(ctx, mine, ids); !ok || err != nil {
			return nil, err
		}
	}
	return notFoundAsNil(l.UserByID(ctx, id))
}

func (l *Loaders) sharesProject(ctx context.Context, mine, theirs []string) (bool, error) {
	set := make(map[string]bool, len(mine))
	for _, id := range mine {
		set[id] = true
	}
	var common []string
	for _, id := range theirs {
		if set[id] {
			common = append(common, id)
		}
	}
	ok, err := l.visibleProjects(ctx, common)
	if err != nil {
		return false, err
	}
	for _, v := range ok {
		if v {
			return true, nil
		}
	}
	return false, nil
}

// Node returns the object with the id when the viewer may see it, else nil.
func (l *Loaders) Node(ctx context.Context, id string) (any, error) {
	var v any
	var err error
	switch dynamo.KindOf(id) {
	case dynamo.KindUser:
		v, err = l.User(ctx, id)
	case dynamo.KindProject:
		v, err = l.Project(ctx, id)
	case dynamo.KindTask:
		v, err = l.Task(ctx, id)
	case dynamo.KindComment:
		v, err = l.Comment(ctx, id)
	default:
		return nil, dynamo.Errorf(dynamo.EINVALID, "%q is not an id", id)
	}
	if err != nil || isNilPtr(v) {
		return nil, err
	}
	return v, nil
}

func isNilPtr(v any) bool {
	switch p := v.(type) {
	case *dynamo.User:
		return p == nil
	case *dynamo.Project:
		return p == nil
	case *dynamo.Task:
		return p == nil
	case *dynamo.Comment:
		return p == nil
	}
	return v == nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fetchProjectsOfUser reads a page of a user's projects: those that exist
// and, for another user, that the viewer is a member of too.
func (l *Loaders) fetchProjectsOfUser(ctx context.Context, k pageKey) (*dynamo.Conn[*dynamo.Project], error) {
	keep := func(ctx context.Context, ms []*dynamo.Member) ([]bool, error) {
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
	items, err := loadAll[*dynamo.Project](ctx, l, refs)
	return &dynamo.Conn[*dynamo.Project]{Items: items, Cursors: c.Cursors, HasNext: c.HasNext}, err
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
func (l *Loaders) fetchTasksByTag(ctx context.Context, k pageKey) (*dynamo.Conn[*dynamo.Task], error) {
	if _, err := dynamo.NormalizeTag(k.id); err != nil {
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
		tasks, err := loadSome[dynamo.Task](ctx, l, refs)
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
	items, err := loadAll[*dynamo.Task](ctx, l, refs)
	return &dynamo.Conn[*dynamo.Task]{Items: items, Cursors: c.Cursors, HasNext: c.HasNext}, err
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
