package loaders

import (
	"context"
	"maps"

	"github.com/99designs/gqlgen/graphql"
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
		if r := prefetchers[f.ObjectDefinition.Name+"."+f.Name]; r != nil {
			if w := r.readAhead(ctx, l, oc, id, f); w != nil {
				waits = append(waits, w)
			}
		}
	}
	return waits
}

// prefetchers are the lists read ahead, by the field they serve
// ("Type.field", their row's under, lists.go): every list field of an
// object a lookup by id returns is one of them or not read ahead, with why
// (a row's notAhead, or notPrefetched), which
// TestEveryListFieldIsCostedAndPrefetched holds to the schema.
var prefetchers = map[string]row{}

// notPrefetched are the list fields of objects looked up by id that have
// no loader, and why.
var notPrefetched = map[string]string{
	"Task.tags": "the task's own attribute: no read of its own",
}

func init() { // once every row is registered
	for _, r := range rows {
		if under, not := r.field(); under != "" && not == "" {
			prefetchers[under] = r
		}
	}
}

// ReadAhead lists the list fields ("Type.field") of objects a lookup by id
// returns: those read ahead with the object (prefetchers) and those that
// are not, with why (the rows' notAhead, notPrefetched).
// TestEveryListFieldIsCostedAndPrefetched (graph) holds both to the schema.
func ReadAhead() (ahead []string, not map[string]string) {
	for f := range prefetchers {
		ahead = append(ahead, f)
	}
	not = maps.Clone(notPrefetched)
	for _, r := range rows {
		if under, why := r.field(); under != "" && why != "" {
			not[under] = why
		}
	}
	return ahead, not
}

// argsOf decodes the arguments of a list field (of the lists only: decoding
// them allocates).
func argsOf(oc *graphql.OperationContext, f graphql.CollectedField) Args {
	return listArgsOf(safeArgs(f.ArgumentMap, oc.Variables))
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
