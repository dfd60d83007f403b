package etag

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/model"
)

// deps is what an answer showed, as its fields recorded it.
type deps struct {
	// unbounded says why the answer can have no ETag ("": it can).
	unbounded string
	projects  map[string]bool         // projects whose data it shows
	tasks     map[string]string       // tasks it shows → their project
	comments  map[string]bool         // the tasks of the comments it shows
	users     map[string]*domain.User // other users it shows, as read
	pages     []viewerPage            // first pages of the viewer's projects
	all       bool                    // every project of the viewer's
}

// viewerPage is a first page of the viewer's projects: its size and what
// it listed.
type viewerPage struct {
	first   int
	ids     []string
	hasNext bool
}

// Field records what field fc's value res (err: its error) shows: its
// rule, and the objects it returns. Called for every field the operation
// resolves (the pipeline's field middleware), concurrently.
func (r *Request) Field(ctx context.Context, fc *graphql.FieldContext, res any, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := &r.deps
	if d.unbounded != "" {
		return
	}
	if strings.HasPrefix(fc.Object, "__") || strings.HasPrefix(fc.Field.Name, "__") {
		return // the schema's: the build's
	}
	name := fc.Object + "." + fc.Field.Name
	ru, ok := rules[name]
	switch {
	case !ok:
		d.unbounded = name + " has no rule"
		return
	case err != nil:
		d.unbounded = name + " failed"
		return
	}
	switch ru {
	case viewersPage, viewersProjects, viewersOverdue:
		if !ofViewer(ctx, fc) {
			d.unbounded = name + " of another user"
			return
		}
		if ru != viewersPage {
			d.all = true
			break
		}
		if !d.page(fc, res) {
			d.unbounded = name + " other than a first page"
			return
		}
	case userLookup, nodeLookup:
		if isNil(res) {
			if id, _ := fc.Args["id"].(string); ru == userLookup || domain.KindOf(id) == domain.KindUser {
				d.unbounded = name + " answered null for a user"
				return
			}
		}
	}
	d.record(ctx, res)
}

// ofViewer reports whether fc is a field of the viewer's own User.
func ofViewer(ctx context.Context, fc *graphql.FieldContext) bool {
	if fc.Parent == nil {
		return false
	}
	var u *domain.User
	switch p := fc.Parent.Result.(type) {
	case *domain.User:
		u = p
	case **domain.User:
		u = *p
	}
	v := viewerOf(ctx)
	return u != nil && v != "" && u.ID == v
}

// page records a first page of the viewer's projects (false: another
// page, which the check does not weigh).
func (d *deps) page(fc *graphql.FieldContext, res any) bool {
	first := intArg(fc.Args["first"])
	for _, a := range []string{"after", "last", "before"} {
		if !isNil(fc.Args[a]) {
			return false
		}
	}
	c, ok := res.(*model.ProjectConnection)
	if !ok || c == nil || first <= 0 {
		return false
	}
	p := viewerPage{first: first, hasNext: c.PageInfo != nil && c.PageInfo.HasNextPage}
	for _, n := range c.Nodes {
		p.ids = append(p.ids, n.ID)
	}
	d.pages = append(d.pages, p)
	return true
}

// record notes the objects a value returns (a list's, one by one).
func (d *deps) record(ctx context.Context, res any) {
	switch v := res.(type) {
	case *domain.Project:
		if v != nil {
			d.project(v.ID)
		}
	case *domain.Task:
		if v != nil {
			d.project(v.ProjectID)
			d.task(v.ID, v.ProjectID)
		}
	case *domain.Comment:
		if v != nil {
			d.comment(v.TaskID)
		}
	case *domain.Member:
		if v != nil {
			d.project(v.ProjectID)
		}
	case *domain.User:
		if v != nil && v.ID != viewerOf(ctx) {
			if d.users == nil {
				d.users = map[string]*domain.User{}
			}
			d.users[v.ID] = v
		}
	case []*domain.Project:
		recordEach(ctx, d, v)
	case []*domain.Task:
		recordEach(ctx, d, v)
	case []*domain.Comment:
		recordEach(ctx, d, v)
	case []*domain.Member:
		recordEach(ctx, d, v)
	}
}

// recordEach records the objects of a list one by one.
func recordEach[T any](ctx context.Context, d *deps, xs []T) {
	for _, x := range xs {
		d.record(ctx, x)
	}
}

func (d *deps) project(id string) {
	if d.projects == nil {
		d.projects = map[string]bool{}
	}
	d.projects[id] = true
}

func (d *deps) task(id, project string) {
	if d.tasks == nil {
		d.tasks = map[string]string{}
	}
	d.tasks[id] = project
}

func (d *deps) comment(task string) {
	if d.comments == nil {
		d.comments = map[string]bool{}
	}
	d.comments[task] = true
}

// intArg is an Int argument's value (0: none).
func intArg(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case *int:
		if x != nil {
			return *x
		}
	}
	return 0
}

// viewerOf is the operation's viewer ("": none).
func viewerOf(ctx context.Context) string {
	v, err := auth.Viewer(ctx)
	if err != nil {
		return ""
	}
	return v
}

// isNil reports whether v is nil or a nil pointer of the types fields
// return.
func isNil(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case *domain.User:
		return x == nil
	case *domain.Project:
		return x == nil
	case *domain.Task:
		return x == nil
	case *domain.Comment:
		return x == nil
	case *domain.Tag:
		return x == nil
	case *string:
		return x == nil
	case *int:
		return x == nil
	}
	return false
}
