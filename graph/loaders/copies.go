package loaders

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/policy"
)

// What the copies of a user's projects on their profile answer
// (dynamo/copies.go: project ULID → name, written in the transaction of
// every change they follow: a membership added or removed, a rename, a
// deletion). The profile is the fact every visibility check reads, one
// key of a level's batch, so a project answered from its copy costs no
// read of its own: a user's projects are listed from their profile (no
// Query of their memberships), and a project that selects only what the
// copy holds, or the lists read by its id, is not read (no project item:
// 0.5 RCU each).

// copyFields are the fields of a project that its copy answers: its id,
// its name, and the lists read by its id alone (members, tasks).
var copyFields = map[string]bool{"id": true, "name": true, "__typename": true, "members": true, "tasks": true}

// onlyCopyFields reports whether a project field selects only copyFields.
func onlyCopyFields(fields []graphql.CollectedField) bool {
	for _, f := range fields {
		if !copyFields[f.Name] {
			return false
		}
	}
	return true
}

// selectsOnlyCopies reports whether the current field (a project, or a
// connection of projects when conn) selects only copyFields.
func (l *Loaders) selectsOnlyCopies(ctx context.Context, conn bool) bool {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return false
	}
	if conn {
		return onlyCopyFields(l.connNodeFields(ctx))
	}
	return onlyCopyFields(l.deps.Lookahead(ctx))
}

// connNodeFields returns the fields the current field, a connection,
// selects on its nodes as the document has them: deferred ones too
// (Deps.Lookahead; the field's own selections, in a query with @defer,
// are the part its plan resolves now). What a node is read as is decided
// on them: a deferred field must find what it needs.
func (l *Loaders) connNodeFields(ctx context.Context) []graphql.CollectedField {
	return nodeFieldsOf(graphql.GetOperationContext(ctx), l.deps.Lookahead(ctx))
}

// projectsKey is a page of a user's projects, and whether its nodes are
// answered by their copies (a page that selects more reads the items:
// two selections of one page are two keys).
type projectsKey struct {
	pageKey
	copies bool
}

// copyOf is the project id as the copy on the profile u holds it, nil when
// it holds none or a name too long for a copy ("": the caller reads the
// project).
func copyOf(u *domain.User, id string) *domain.Project {
	if name, ok := policy.ProjectSeen(u, id); ok && name != "" {
		return &domain.Project{ID: id, Name: name}
	}
	return nil
}

// profileOf loads a user's profile through the level's batch (nil: none).
func (l *Loaders) profileOf(ctx context.Context, id string) (*domain.User, error) {
	v, err := l.objects.Load(ctx, dynamo.UserRef(id))()
	if err != nil && !domain.IsNotFound(err) {
		return nil, err
	}
	u, _ := v.(*domain.User)
	return u, nil
}

// fetchProjectsOfUser reads a page of a user's projects: those their
// profile lists (policy.ProjectsSeen: a deleted project's copy goes in the
// deletion's transaction) that the viewer may see (themselves: all; another
// user: those the viewer is a member of too). The lists under them start
// as soon as the page is known (projectsAhead); the projects are their
// copies when k.copies, else their items, read in one batch.
func (l *Loaders) fetchProjectsOfUser(ctx context.Context, k projectsKey) (*domain.Conn[*domain.Project], error) {
	if err := domain.ValidUserID(k.id); err != nil {
		return nil, err
	}
	if _, err := dynamo.ProjectsPage(nil, k.page()); err != nil { // bad arguments: refused before any read
		return nil, err
	}
	l.objects.Load(ctx, dynamo.UserRef(l.viewer)) // the visibility check's, in the same batch
	u, err := l.profileOf(ctx, k.id)
	if err != nil {
		return nil, err
	}
	listed := policy.ProjectsSeen(u)
	ok, err := l.visibleProjects(ctx, listed)
	if err != nil {
		return nil, err
	}
	var ids []string
	for i, id := range listed {
		if ok[i] {
			ids = append(ids, id)
		}
	}
	c, err := dynamo.ProjectsPage(ids, k.page())
	if err != nil {
		return nil, err
	}
	if ahead, ok := l.projectsAhead.Load(k); ok {
		ahead.(func(context.Context, []string))(ctx, c.Items) // with the projects' reads
	}
	projects := make([]*domain.Project, len(c.Items))
	var refs []dynamo.Ref
	for i, id := range c.Items {
		if k.copies {
			projects[i] = copyOf(u, id)
		}
		if projects[i] == nil {
			refs = append(refs, dynamo.ProjectRef(id))
		}
	}
	items, err := loadAll[*domain.Project](ctx, l, refs)
	if err != nil {
		return nil, err
	}
	for i := range projects {
		if projects[i] == nil {
			projects[i], items = items[0], items[1:]
		}
	}
	return domain.ConnOf(c, projects), nil
}
