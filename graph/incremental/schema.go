// Package incremental is incremental delivery (@defer): a query with
// @defer answered as graphql-js 17 answers it, gqlgen's generated code
// (graph/exec, through its Executor) resolving every field. The initial
// part comes without the deferred fields, then each deferred fragment's,
// hasNext false on the last, in the format the transport writes (Parts:
// the 2022-08-24 one, or graphql-js 17's pending, incremental and
// completed). The operation pipeline (graph/pipeline) wraps the generated
// schema in New and refuses @defer where it cannot be delivered before
// anything runs; the transports that deliver the parts are web's. The
// loaders read ahead through LookaheadFields and Defers, which see the
// document as written, deferred fields included.
package incremental

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// New returns es, the generated executable schema, but for a query with
// @defer, which graphql-js 17's incremental execution answers with gqlgen
// resolving its fields (incremental, run.go; its plan, plan.go), in the
// format its transport writes (Parts): the initial payload without the
// deferred fields, each deferred fragment announced with the payload that
// delivers its parent, its fields delivered once, its null where a
// non-null field of it failed. None of its parts outlives its request:
// every run resolves on a context whose DynamoDB calls end with the
// request, a task's end never waits for its reader, and the transport's
// wait for the next part ends with its context.
func New(es graphql.ExecutableSchema) graphql.ExecutableSchema { return schema{es} }

type schema struct{ graphql.ExecutableSchema }

func (s schema) Exec(ctx context.Context) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Query || !Defers(oc, oc.Operation.SelectionSet) {
		return s.ExecutableSchema.Exec(ctx)
	}
	in := newIncremental(s.ExecutableSchema, oc, partsOf(ctx))
	if in == nil {
		return s.ExecutableSchema.Exec(ctx)
	}
	return in.respond
}

// Defers reports whether set, or a fragment it spreads, has a fragment
// that @defer defers (its if argument not false).
func Defers(oc *graphql.OperationContext, set ast.SelectionSet) bool {
	return defers(oc, set, map[string]bool{})
}

func defers(oc *graphql.OperationContext, set ast.SelectionSet, seen map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if defers(oc, s.SelectionSet, seen) {
				return true
			}
		case *ast.InlineFragment:
			if deferred(oc, s.Directives) || defers(oc, s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if deferred(oc, s.Directives) {
				return true
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := oc.Doc.Fragments.ForName(s.Name); f != nil && defers(oc, f.SelectionSet, seen) {
				return true
			}
		}
	}
	return false
}

// deferred reports whether directives defer their fragment.
func deferred(oc *graphql.OperationContext, directives ast.DirectiveList) bool {
	d := directives.ForName("defer")
	if d == nil {
		return false
	}
	on, ok := d.ArgumentMap(oc.Variables)["if"].(bool)
	return !ok || on
}

// LookaheadFields returns the fields that ctx's field selects as the
// document has them: for a field the plan of a query with @defer
// synthesized, all its nodes' selections, deferred ones too (what reads
// ahead look for, as for the query without @defer); else gqlgen's.
func LookaheadFields(ctx context.Context) []graphql.CollectedField {
	fc := graphql.GetFieldContext(ctx)
	sel := fc.Field.Selections
	if in, _ := ctx.Value(incrementalKey{}).(*incremental); in != nil {
		if s, ok := in.plan.lookahead[fc.Field.Field]; ok {
			sel = s
		}
	}
	return graphql.CollectFields(graphql.GetOperationContext(ctx), sel, nil)
}
