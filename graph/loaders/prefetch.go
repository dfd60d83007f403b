package loaders

import (
	"context"
	"maps"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/vektah/gqlparser/v2/ast"
)

// Prefetch (GraphQL field lookahead): when a single object is asked for by
// id, the lists selected under it are keyed by that id alone, so their reads
// can start together with the object's own read instead of one round trip
// after it. The results wait in the loaders' cache; the list resolvers find
// them there. Nothing is shown unless the object turns out to be visible.

// prefetch starts, for the object with the given id resolved by the current
// field, the loads of the lists selected under it.
// It returns a function that waits until those lists are read (their
// results, errors included, are left to their resolvers) and reports
// whether there were any.
func (l *Loaders) prefetch(ctx context.Context, id string) func() bool {
	if l.cfg.NoBatch || !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return func() bool { return false }
	}
	waits := l.prefetchFields(ctx, id, l.deps.Lookahead(ctx))
	return func() bool {
		for _, w := range waits {
			w()
		}
		return len(waits) > 0
	}
}

// waitFor makes a wait of prefetch from a loader's thunk.
func waitFor[V any](th func() (V, error)) func() { return func() { _, _ = th() } }

// prefetchFields starts the loads of the lists among fields, selected under
// the object with the given id, and returns the waits of the user's lists
// among them and of a task's comments whose authors are selected, which
// also asks for the authors (prefetch).
func (l *Loaders) prefetchFields(ctx context.Context, id string, fields []graphql.CollectedField) (waits []func()) {
	oc := graphql.GetOperationContext(ctx)
	for _, f := range fields {
		if f.Definition == nil || f.ObjectDefinition == nil {
			continue
		}
		if start := prefetchers[f.ObjectDefinition.Name+"."+f.Name]; start != nil {
			if w := start(ctx, l, oc, id, f); w != nil {
				waits = append(waits, w)
			}
		}
	}
	return waits
}

// prefetcher starts the read of one list field f under the object id and
// returns what waits for it (nil: nothing to wait for).
type prefetcher func(ctx context.Context, l *Loaders, oc *graphql.OperationContext, id string, f graphql.CollectedField) func()

// prefetchers are the lists read ahead, by "Type.field": every list field
// of an object a lookup by id returns is here or in notPrefetched (with
// why), which TestEveryListFieldIsCostedAndPrefetched holds to the schema.
var prefetchers map[string]prefetcher

// notPrefetched are the list fields of objects looked up by id that are not
// read ahead, and why.
var notPrefetched = map[string]string{
	"Task.tags": "the task's own attribute: no read of its own",
	"Tag.tasks": "keyed by the viewer's projects, which the tag's id does not give: read when resolved",
}

// ReadAhead lists the list fields ("Type.field") of objects a lookup by id
// returns: those read ahead with the object (prefetchers) and those that
// are not, with why (notPrefetched). TestEveryListFieldIsCostedAndPrefetched
// (graph) holds both to the schema.
func ReadAhead() (ahead []string, not map[string]string) {
	for f := range prefetchers {
		ahead = append(ahead, f)
	}
	return ahead, maps.Clone(notPrefetched)
}

func init() { // (an initialization cycle otherwise: User.projects recurses into prefetchFields)
	prefetchers = map[string]prefetcher{
		"User.projects":      prefetchProjectsOfUser,
		"User.assignedTasks": prefetchAssignedTasks,
		"User.overdueTasks":  prefetchOverdueTasks,
		"Project.members":    prefetchMembers,
		"Project.tasks":      prefetchTasksOfProject,
		"Task.comments":      prefetchComments,
	}
}

// argsOf decodes the arguments of a list field (of the lists only: decoding
// them allocates).
func argsOf(oc *graphql.OperationContext, f graphql.CollectedField) listArgs {
	return listArgsOf(safeArgs(f.ArgumentMap, oc.Variables))
}

func prefetchProjectsOfUser(ctx context.Context, l *Loaders, oc *graphql.OperationContext, id string, f graphql.CollectedField) func() {
	nodes := nodeFields(oc, f)
	k := projectsKey{pageKeyOf(id, argsOf(oc, f).pageArgs), onlyCopyFields(nodes)}
	if id == l.viewer && len(nodes) > 0 {
		// The viewer's own projects: their lists (members, tasks) can
		// start as soon as the page is known, with the projects' own
		// reads (see fetchProjectsOfUser).
		l.projectsAhead.Store(k, func(ctx context.Context, ids []string) {
			for _, pid := range ids {
				l.prefetchFields(ctx, pid, nodes)
			}
		})
	}
	return waitFor(l.projectsOfUserLoader().Load(ctx, k))
}

func prefetchAssignedTasks(ctx context.Context, l *Loaders, oc *graphql.OperationContext, id string, f graphql.CollectedField) func() {
	k := pageKeyOf(id, argsOf(oc, f).pageArgs)
	l.noteTaskProjects(oc, f, k)
	return waitFor(l.assignedToLoader().Load(ctx, k))
}

func prefetchOverdueTasks(ctx context.Context, l *Loaders, oc *graphql.OperationContext, id string, f graphql.CollectedField) func() {
	a := argsOf(oc, f)
	if a.badAsOf {
		return nil
	}
	k := overdueKeyOf(id, a.asOf, l.Today(), a.pageArgs)
	l.noteTaskProjects(oc, f, k.pageKey)
	return waitFor(l.overdueOfLoader().Load(ctx, k))
}

func prefetchMembers(ctx context.Context, l *Loaders, _ *graphql.OperationContext, id string, _ graphql.CollectedField) func() {
	l.membersOfLoader().Load(ctx, id)
	return nil
}

func prefetchTasksOfProject(ctx context.Context, l *Loaders, oc *graphql.OperationContext, id string, f graphql.CollectedField) func() {
	a := argsOf(oc, f)
	k := projectTasksKeyOf(id, a.status, a.pageArgs)
	// (The resolver decides on every field, deferred ones too
	// (connNodeFields): a deferred field a list does not show makes its
	// page another key, read then, and this one unused.)
	k.listed = onlyFields(nodeFields(oc, f), taskListFields)
	for _, nf := range nodeFields(oc, f) {
		// (Not under @defer: a deferred part must not be ready
		// before the part it is in.)
		if nf.Name == "comments" && nf.ObjectDefinition != nil && nf.ObjectDefinition.Name == "Task" && !l.deps.Defers(oc, f.SelectionSet) {
			l.origin.commentsAhead.Store(k, argsOf(oc, nf).pageArgs)
		}
	}
	l.tasksOfProjectLoader().Load(ctx, k)
	return nil
}

func prefetchComments(ctx context.Context, l *Loaders, oc *graphql.OperationContext, id string, f graphql.CollectedField) func() {
	th := l.commentsOfLoader().Load(ctx, pageKeyOf(id, argsOf(oc, f).pageArgs))
	if !selectsNode(oc, f, "author") {
		return nil
	}
	// The authors join the task's visibility check: the task's lookup
	// waits for the comments, read beside the task (no round trip more),
	// and asks for their authors just before its check, so that both are
	// one batch however far apart the two answers arrive (Loaders.Task).
	return func() {
		if c, err := th(); err == nil {
			for _, cm := range c.Items {
				l.objects.Load(ctx, dynamo.UserRef(cm.AuthorID))
			}
		}
	}
}

// selects reports whether the current field selects a child of that name.
func (l *Loaders) selects(ctx context.Context, name string) bool {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return false
	}
	for _, f := range l.deps.Lookahead(ctx) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// nodeFields returns the fields a connection field selects on its nodes
// (through nodes or edges.node).
func nodeFields(oc *graphql.OperationContext, conn graphql.CollectedField) []graphql.CollectedField {
	return nodeFieldsOf(oc, graphql.CollectFields(oc, conn.Selections, nil))
}

// nodeFieldsOf returns the fields a connection whose own fields are
// children selects on its nodes.
func nodeFieldsOf(oc *graphql.OperationContext, children []graphql.CollectedField) []graphql.CollectedField {
	var out []graphql.CollectedField
	for _, f := range children {
		switch f.Name {
		case "nodes":
			out = append(out, graphql.CollectFields(oc, f.Selections, nil)...)
		case "edges":
			for _, e := range graphql.CollectFields(oc, f.Selections, nil) {
				if e.Name == "node" {
					out = append(out, graphql.CollectFields(oc, e.Selections, nil)...)
				}
			}
		}
	}
	return out
}

// selectsNode reports whether a connection field selects name on its nodes
// (through nodes or edges.node).
func selectsNode(oc *graphql.OperationContext, conn graphql.CollectedField, name string) bool {
	for _, f := range graphql.CollectFields(oc, conn.Selections, nil) {
		sel := f.Selections
		if f.Name == "edges" {
			for _, e := range graphql.CollectFields(oc, f.Selections, nil) {
				if e.Name == "node" && hasField(oc, e.Selections, name) {
					return true
				}
			}
			continue
		}
		if f.Name == "nodes" && hasField(oc, sel, name) {
			return true
		}
	}
	return false
}

func hasField(oc *graphql.OperationContext, set ast.SelectionSet, name string) bool {
	for _, f := range graphql.CollectFields(oc, set, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// safeArgs evaluates a field's arguments; a malformed value (the resolver
// will report it) yields no arguments.
func safeArgs(f func(map[string]any) map[string]any, vars map[string]any) (m map[string]any) {
	defer func() {
		if recover() != nil {
			m = map[string]any{}
		}
	}()
	return f(vars)
}

// noteTaskProjects records that the page k of a user's tasks (assigned or
// overdue) selects its nodes' project: its visibility check then reads
// the projects in its batch (visibleTasksOf).
func (l *Loaders) noteTaskProjects(oc *graphql.OperationContext, conn graphql.CollectedField, k pageKey) {
	if selectsProjectItem(oc, conn) {
		l.taskProjects.Store(k, struct{}{})
	}
}

// selectsProjectItem reports whether a connection of tasks selects on its
// nodes a project field its copy does not answer.
func selectsProjectItem(oc *graphql.OperationContext, conn graphql.CollectedField) bool {
	for _, f := range nodeFields(oc, conn) {
		if f.Name == "project" && !onlyCopyFields(graphql.CollectFields(oc, f.Selections, nil)) {
			return true
		}
	}
	return false
}
