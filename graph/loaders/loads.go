package loaders

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// The loads the resolvers call: point reads through the operation's one
// batch of objects (Load); a page of a list is its List's Load (lists.go).

// Load asks for the object ref names in the operation's batch of point
// reads (objects) and returns what waits for it, as a T.
func Load[T any](ctx context.Context, l *Loaders, ref dynamo.Ref) func() (T, error) {
	th := l.objects.Load(ctx, ref)
	return func() (T, error) {
		var zero T
		v, err := th()
		if err != nil {
			return zero, err
		}
		return v.(T), nil
	}
}

// Prime puts v into the batch of point reads as the object ref names,
// unless it is read or being read: what a read of its own brought (a
// sync's profile and projects) is not read again.
func (l *Loaders) Prime(ctx context.Context, ref dynamo.Ref, v any) { l.objects.Prime(ctx, ref, v) }

// UserByID loads a user (ENOTFOUND when there is no profile).
func (l *Loaders) UserByID(ctx context.Context, id string) (*domain.User, error) {
	return Load[*domain.User](ctx, l, dynamo.UserRef(id))()
}

// ProjectByID loads a project (ENOTFOUND when it does not exist).
func (l *Loaders) ProjectByID(ctx context.Context, id string) (*domain.Project, error) {
	return Load[*domain.Project](ctx, l, dynamo.ProjectRef(id))()
}

// TaskProject loads a task's project: from the copy on the viewer's
// profile (which the task's visibility check read) when the field selects
// only what the copy answers (copyFields), else its item.
func (l *Loaders) TaskProject(ctx context.Context, id string) (*domain.Project, error) {
	if l.selectsOnlyCopies(ctx, false) {
		if u, err := l.profileOf(ctx, l.viewer); err == nil { // (else: the item, as without a copy)
			if p := copyOf(u, id); p != nil {
				return p, nil
			}
		}
	}
	return l.ProjectByID(ctx, id)
}

// TaskByID loads a task (ENOTFOUND when it does not exist).
func (l *Loaders) TaskByID(ctx context.Context, id string) (*domain.Task, error) {
	return Load[*domain.Task](ctx, l, dynamo.TaskRef(id))()
}

// onlyFields reports whether fields are all in names.
func onlyFields(fields []graphql.CollectedField, names map[string]bool) bool {
	for _, f := range fields {
		if !names[f.Name] {
			return false
		}
	}
	return true
}

// loadAll loads objects of one type, all in one batch.
func loadAll[T any](ctx context.Context, l *Loaders, refs []dynamo.Ref) ([]T, error) {
	ths := make([]func() (T, error), len(refs))
	for i, r := range refs {
		ths[i] = Load[T](ctx, l, r)
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

// loadSome is loadAll with missing objects as nil.
func loadSome[T any](ctx context.Context, l *Loaders, refs []dynamo.Ref) ([]*T, error) {
	ths := make([]func() (*T, error), len(refs))
	for i, r := range refs {
		ths[i] = Load[*T](ctx, l, r)
	}
	out := make([]*T, len(refs))
	for i, th := range ths {
		var err error
		if out[i], err = NotFoundAsNil(th()); err != nil {
			return nil, err
		}
	}
	return out, nil
}
