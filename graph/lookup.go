package graph

import (
	"cmp"
	"context"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// Lookups by id: the root fields (node, user, project, task) return an
// object only when the viewer may see it (visibility.go) and null otherwise,
// hidden and missing alike, so that an id reveals nothing. The viewer's own
// profile (me) and a task's assignee are looked up here too.

// notFoundAsNil turns ENOTFOUND into a nil result without error.
func notFoundAsNil[T any](v *T, err error) (*T, error) {
	if domain.IsNotFound(err) {
		return nil, nil
	}
	return v, err
}

// Project returns the project when the viewer may see it, else nil.
func (l *Loaders) Project(ctx context.Context, id string) (*domain.Project, error) {
	if _, err := domain.ParseProjectID(id); err != nil {
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
func (l *Loaders) Task(ctx context.Context, id string) (*domain.Task, error) {
	if _, err := domain.ParseTaskID(id); err != nil {
		return nil, err
	}
	wait := l.prefetch(ctx, id)
	t, err := notFoundAsNil(l.TaskByID(ctx, id))
	if t == nil || err != nil {
		return nil, err
	}
	if t.AssigneeID != nil && selects(ctx, "assignee") {
		l.objects.Load(ctx, dynamo.UserRef(*t.AssigneeID)) // joins the visibility check's batch
	}
	wait() // the comments' authors join it too (prefetch)
	ok, err := l.canSeeProject(ctx, t.ProjectID)
	if !ok || err != nil {
		return nil, err
	}
	return t, nil
}

// Comment returns the comment when the viewer may see its task, else nil.
func (l *Loaders) Comment(ctx context.Context, id string) (*domain.Comment, error) {
	taskID, err := domain.ParseCommentID(id)
	if err != nil {
		return nil, err
	}
	cth := load[*domain.Comment](ctx, l, dynamo.CommentRef(id))
	t, err := l.Task(ctx, taskID) // read together with the comment
	c, cerr := notFoundAsNil(cth())
	if t == nil || err != nil || c == nil || cerr != nil {
		return nil, cmp.Or(err, cerr)
	}
	return c, nil
}

// User returns the user when it is the viewer or shares a project with the
// viewer, else nil.
func (l *Loaders) User(ctx context.Context, id string) (*domain.User, error) {
	if err := domain.ValidUserID(id); err != nil {
		return nil, err
	}
	l.prefetch(ctx, id)
	if ok, err := l.canSeeUser(ctx, id); !ok || err != nil {
		return nil, err
	}
	return notFoundAsNil(l.UserByID(ctx, id))
}

// me returns the viewer's profile, ENOTFOUND until it was created. When
// lists are selected under it, their reads start first and the profile is
// read in their visibility check's batch (profileAhead), not in a call of
// its own beside them; me waits for them, then takes it from the cache (or
// reads it, when no list needed a check).
func (l *Loaders) me(ctx context.Context) (*domain.User, error) {
	l.profileAhead.Store(true)
	if !l.prefetch(ctx, l.viewer)() {
		l.profileAhead.Store(false)
	}
	u, err := l.UserByID(ctx, l.viewer)
	if domain.IsNotFound(err) {
		return nil, dynamo.ErrNoProfile
	}
	return u, err
}

// optionalUser loads a user that the viewer may see by the path that led
// here (an assignee); no id or a missing profile is null.
func (l *Loaders) optionalUser(ctx context.Context, id *string) (*domain.User, error) {
	if id == nil {
		return nil, nil
	}
	return notFoundAsNil(l.UserByID(ctx, *id))
}

// Node returns the object with the id when the viewer may see it, else nil.
func (l *Loaders) Node(ctx context.Context, id string) (any, error) {
	var v any
	var err error
	switch domain.KindOf(id) {
	case domain.KindUser:
		v, err = l.User(ctx, id)
	case domain.KindProject:
		v, err = l.Project(ctx, id)
	case domain.KindTask:
		v, err = l.Task(ctx, id)
	case domain.KindComment:
		v, err = l.Comment(ctx, id)
	default:
		return nil, domain.Errorf(domain.EINVALID, "%q is not an id", id)
	}
	if err != nil || isNilPtr(v) {
		return nil, err
	}
	return v, nil
}

func isNilPtr(v any) bool {
	switch p := v.(type) {
	case *domain.User:
		return p == nil
	case *domain.Project:
		return p == nil
	case *domain.Task:
		return p == nil
	case *domain.Comment:
		return p == nil
	}
	return v == nil
}
