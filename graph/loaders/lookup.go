package loaders

import (
	"cmp"
	"context"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// Lookups by id: the root fields (node, user, project, task) return an
// object only when the viewer may see it (visibility.go) and null otherwise,
// hidden and missing alike, so that an id reveals nothing. An id of a form no
// object of the field's type has (malformed, or another type's) names no
// such object either: null too, before any read (lookup, the one place of
// that rule). The viewer's own profile (me) and a task's assignee are looked
// up here too.

// NotFoundAsNil turns ENOTFOUND into a nil result without error.
func NotFoundAsNil[T any](v *T, err error) (*T, error) {
	if domain.IsNotFound(err) {
		return nil, nil
	}
	return v, err
}

// lookup returns the object id names when the viewer may see it, else nil:
// node(id:) with want KindUnknown (any kind), the typed root fields with
// their kind. An id that is not of the kind wanted, or of no kind at all,
// is nil without a read.
func (l *Loaders) lookup(ctx context.Context, id string, want domain.Kind) (any, error) {
	kind := domain.KindOf(id)
	if kind == domain.KindUnknown || want != domain.KindUnknown && kind != want {
		return nil, nil
	}
	var v any
	var err error
	switch kind {
	case domain.KindUser:
		v, err = l.user(ctx, id)
	case domain.KindProject:
		v, err = l.project(ctx, id)
	case domain.KindTask:
		v, err = l.task(ctx, id)
	case domain.KindComment:
		v, err = l.comment(ctx, id)
	case domain.KindTag:
		// A tag is its name: nothing to read, nothing hidden (its tasks
		// are the viewer's alone, Tag.tasks).
		name, _ := domain.ParseTagID(id)
		v = &domain.Tag{Name: name}
	}
	if err != nil || isNilPtr(v) {
		return nil, err
	}
	return v, nil
}

// Node returns the object with the id when the viewer may see it, else nil.
func (l *Loaders) Node(ctx context.Context, id string) (any, error) {
	return l.lookup(ctx, id, domain.KindUnknown)
}

// Project returns the project when the viewer may see it, else nil.
func (l *Loaders) Project(ctx context.Context, id string) (*domain.Project, error) {
	return typed[*domain.Project](l.lookup(ctx, id, domain.KindProject))
}

// Task returns the task when the viewer may see it, else nil.
func (l *Loaders) Task(ctx context.Context, id string) (*domain.Task, error) {
	return typed[*domain.Task](l.lookup(ctx, id, domain.KindTask))
}

// User returns the user when it is the viewer or shares a project with the
// viewer, else nil.
func (l *Loaders) User(ctx context.Context, id string) (*domain.User, error) {
	return typed[*domain.User](l.lookup(ctx, id, domain.KindUser))
}

// typed converts lookup's answer for a typed root field.
func typed[T any](v any, err error) (T, error) {
	t, _ := v.(T)
	return t, err
}

// project reads a project (a well-formed id) for lookup.
func (l *Loaders) project(ctx context.Context, id string) (*domain.Project, error) {
	l.prefetch(ctx, id)
	copies := l.selectsOnlyCopies(ctx, false)
	if !copies {
		l.objects.Load(ctx, dynamo.ProjectRef(id)) // joins the visibility check's batch
	}
	ok, err := l.canSeeProject(ctx, id)
	if !ok || err != nil {
		return nil, err
	}
	if copies { // what is selected, the copy the check read answers (copies.go)
		u, err := l.profileOf(ctx, l.viewer)
		if p := copyOf(u, id); p != nil || err != nil {
			return p, err
		}
	}
	return NotFoundAsNil(l.ProjectByID(ctx, id))
}

// task reads a task (a well-formed id) and checks its project for lookup
// and comment.
func (l *Loaders) task(ctx context.Context, id string) (*domain.Task, error) {
	wait := l.prefetch(ctx, id)
	t, err := NotFoundAsNil(l.TaskByID(ctx, id))
	if t == nil || err != nil {
		return nil, err
	}
	if t.AssigneeID != nil && l.selects(ctx, "assignee") {
		l.objects.Load(ctx, dynamo.UserRef(*t.AssigneeID)) // joins the visibility check's batch
	}
	wait() // the comments' authors join it too (prefetch)
	ok, err := l.canSeeProject(ctx, t.ProjectID)
	if !ok || err != nil {
		return nil, err
	}
	return t, nil
}

// comment reads a comment (a well-formed id) for lookup: it is there when
// the viewer may see its task.
func (l *Loaders) comment(ctx context.Context, id string) (*domain.Comment, error) {
	taskID, err := domain.ParseCommentID(id)
	if err != nil {
		return nil, err
	}
	cth := Load[*domain.Comment](ctx, l, dynamo.CommentRef(id))
	t, err := l.task(ctx, taskID) // read together with the comment
	c, cerr := NotFoundAsNil(cth())
	if t == nil || err != nil || c == nil || cerr != nil {
		return nil, cmp.Or(err, cerr)
	}
	return c, nil
}

// user reads a user (a well-formed id) for lookup: it is there when it is
// the viewer or shares a project with the viewer.
func (l *Loaders) user(ctx context.Context, id string) (*domain.User, error) {
	l.prefetch(ctx, id)
	if ok, err := l.canSeeUser(ctx, id); !ok || err != nil {
		return nil, err
	}
	return NotFoundAsNil(l.UserByID(ctx, id))
}

// Me returns the viewer's profile, ENOTFOUND until it was created. When
// lists are selected under it, their reads start first and the profile is
// read in their visibility check's batch (profileAhead), not in a call of
// its own beside them; me waits for them, then takes it from the cache (or
// reads it, when no list needed a check).
func (l *Loaders) Me(ctx context.Context) (*domain.User, error) {
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

// OptionalUser loads a user that the viewer may see by the path that led
// here (an assignee); no id or a missing profile is null.
func (l *Loaders) OptionalUser(ctx context.Context, id *string) (*domain.User, error) {
	if id == nil {
		return nil, nil
	}
	return NotFoundAsNil(l.UserByID(ctx, *id))
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
	case *domain.Tag:
		return p == nil
	}
	return v == nil
}
