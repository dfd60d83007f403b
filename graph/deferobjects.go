package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// objectKind is how a task resolves fields of one object type with
// gqlgen's generated code: the type's own execution (ec._Type, as gqlgen
// resolves any value of it) and its fields' contexts (for step mode).
// TestEveryObjectTypeCanBeDeferred holds the list to the schema.
type objectKind struct {
	name string
	// value returns v as the generated code takes it, if v is a value of
	// the type (its model, or a pointer to it) and not nil.
	value func(v any) (any, bool)
	exec  func(ec *executionContext, ctx context.Context, sel ast.SelectionSet, v any) graphql.Marshaler
	child func(ec *executionContext) func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error)
}

// objectKinds are the schema's object types but its root types.
var objectKinds = map[string]objectKind{}

func init() {
	for _, k := range []objectKind{
		kindOf("User", (*executionContext)._User, (*executionContext).childFields_User),
		kindOf("ProjectMember", (*executionContext)._ProjectMember, (*executionContext).childFields_ProjectMember),
		kindOf("Project", (*executionContext)._Project, (*executionContext).childFields_Project),
		kindOf("TaskCounts", (*executionContext)._TaskCounts, (*executionContext).childFields_TaskCounts),
		kindOf("Task", (*executionContext)._Task, (*executionContext).childFields_Task),
		kindOf("Comment", (*executionContext)._Comment, (*executionContext).childFields_Comment),
		kindOf("Tag", (*executionContext)._Tag, (*executionContext).childFields_Tag),
		kindOf("PageInfo", (*executionContext)._PageInfo, (*executionContext).childFields_PageInfo),
		kindOf("ProjectEdge", (*executionContext)._ProjectEdge, (*executionContext).childFields_ProjectEdge),
		kindOf("ProjectConnection", (*executionContext)._ProjectConnection, (*executionContext).childFields_ProjectConnection),
		kindOf("TaskEdge", (*executionContext)._TaskEdge, (*executionContext).childFields_TaskEdge),
		kindOf("TaskConnection", (*executionContext)._TaskConnection, (*executionContext).childFields_TaskConnection),
		kindOf("CommentEdge", (*executionContext)._CommentEdge, (*executionContext).childFields_CommentEdge),
		kindOf("CommentConnection", (*executionContext)._CommentConnection, (*executionContext).childFields_CommentConnection),
		kindOf("ProjectEvent", (*executionContext)._ProjectEvent, (*executionContext).childFields_ProjectEvent),
		kindOf("SyncPage", (*executionContext)._SyncPage, (*executionContext).childFields_SyncPage),
		kindOf("Tombstone", (*executionContext)._Tombstone, (*executionContext).childFields_Tombstone),
	} {
		objectKinds[k.name] = k
	}
}

// childFunc is a generated function that makes the context of a field of
// one type.
type childFunc = func(*executionContext, context.Context, graphql.CollectedField) (*graphql.FieldContext, error)

// kindOf makes the objectKind of the type name, modelled by T.
func kindOf[T any](name string, exec func(*executionContext, context.Context, ast.SelectionSet, *T) graphql.Marshaler, child childFunc) objectKind {
	return objectKind{
		name: name,
		value: func(v any) (any, bool) {
			switch o := v.(type) {
			case *T:
				return o, o != nil
			case T:
				return &o, true
			}
			return nil, false
		},
		exec: func(ec *executionContext, ctx context.Context, sel ast.SelectionSet, v any) graphql.Marshaler {
			return exec(ec, ctx, sel, v.(*T))
		},
		child: func(ec *executionContext) func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) {
			return func(ctx context.Context, f graphql.CollectedField) (*graphql.FieldContext, error) {
				return child(ec, ctx, f)
			}
		},
	}
}

// queryKind resolves root fields (the object is nil).
var queryKind = objectKind{
	name:  "Query",
	value: func(any) (any, bool) { return nil, true },
	exec: func(ec *executionContext, ctx context.Context, sel ast.SelectionSet, _ any) graphql.Marshaler {
		return ec._Query(ctx, sel)
	},
	child: func(*executionContext) func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) {
		return nil
	},
}

// kindOfValue returns the object kind of v, a value of a field of type t
// (one of its possible types when it is abstract), and v as the kind's
// code takes it.
func kindOfValue(schema *ast.Schema, t string, v any) (objectKind, any, bool) {
	def := schema.Types[t]
	if def == nil {
		return objectKind{}, nil, false
	}
	if !def.IsAbstractType() {
		k, ok := objectKinds[t]
		if !ok {
			return objectKind{}, nil, false
		}
		o, ok := k.value(v)
		return k, o, ok
	}
	for _, d := range schema.GetPossibleTypes(def) {
		if k, ok := objectKinds[d.Name]; ok {
			if o, ok := k.value(v); ok {
				return k, o, true
			}
		}
	}
	return objectKind{}, nil, false
}
