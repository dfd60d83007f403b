// Package exec is gqlgen's generated executor of the schema
// (generated.go: regenerate with `go run github.com/99designs/gqlgen
// generate`, never edit) and, in objects.go, the one hand-written file
// beside it: what the @defer executor (graph/incremental) needs of the
// generated internals, which gqlgen leaves unexported. The resolvers
// (package graph) implement ResolverRoot; the operation pipeline
// (graph/pipeline) wraps the ExecutableSchema.
package exec

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Executor resolves selection sets with the generated code outside
// gqlgen's own Exec: the @defer executor's, which resolves the initial
// part of a query on its root and each deferred fragment on the object it
// was met at, each on its own goroutine.
type Executor struct{ ec *executionContext }

// wrapper is an executable schema around another (Unwrap returns it).
type wrapper interface {
	Unwrap() graphql.ExecutableSchema
}

// NewExecutor returns the executor of the operation oc on es, or false
// when es is not the generated schema (NewExecutableSchema) nor wraps it
// (an Unwrap method returning it: graph's priced, which prices the
// lists).
func NewExecutor(es graphql.ExecutableSchema, oc *graphql.OperationContext) (*Executor, bool) {
	if w, ok := es.(wrapper); ok {
		return NewExecutor(w.Unwrap(), oc)
	}
	s, ok := es.(*executableSchema)
	if !ok {
		return nil, false
	}
	return &Executor{ec: newExecutionContext(oc, s, make(chan graphql.DeferredResult))}, true
}

// Recover is the operation's recover function (a resolver's panic as an
// error), as the generated code calls it.
func (e *Executor) Recover(ctx context.Context, p any) error { return e.ec.Recover(ctx, p) }

// Object is how the executor resolves fields of one object type: the
// type's own execution (ec._Type, as gqlgen resolves any value of it) and
// its fields' contexts (for graph/dispatch).
// TestEveryObjectTypeCanBeDeferred holds the list to the schema.
type Object struct {
	// Name is the type's.
	Name string
	// value returns v as the generated code takes it, if v is a value of
	// the type (its model, or a pointer to it) and not nil.
	value func(v any) (any, bool)
	exec  func(ec *executionContext, ctx context.Context, sel ast.SelectionSet, v any) graphql.Marshaler
	child func(ec *executionContext) func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error)
}

// Exec resolves sel on v, a value of the type as ObjectOf returned it.
func (o Object) Exec(e *Executor, ctx context.Context, sel ast.SelectionSet, v any) graphql.Marshaler {
	return o.exec(e.ec, ctx, sel, v)
}

// ChildFields returns the generated function that makes the context of a
// field of the type (nil for the root type).
func (o Object) ChildFields(e *Executor) func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) {
	return o.child(e.ec)
}

// objects are the schema's object types but its root types.
var objects = map[string]Object{}

func init() {
	for _, k := range []Object{
		objectOf("User", (*executionContext)._User, (*executionContext).childFields_User),
		objectOf("ProjectMember", (*executionContext)._ProjectMember, (*executionContext).childFields_ProjectMember),
		objectOf("Project", (*executionContext)._Project, (*executionContext).childFields_Project),
		objectOf("TaskCounts", (*executionContext)._TaskCounts, (*executionContext).childFields_TaskCounts),
		objectOf("Task", (*executionContext)._Task, (*executionContext).childFields_Task),
		objectOf("Comment", (*executionContext)._Comment, (*executionContext).childFields_Comment),
		objectOf("Tag", (*executionContext)._Tag, (*executionContext).childFields_Tag),
		objectOf("PageInfo", (*executionContext)._PageInfo, (*executionContext).childFields_PageInfo),
		objectOf("ProjectEdge", (*executionContext)._ProjectEdge, (*executionContext).childFields_ProjectEdge),
		objectOf("ProjectConnection", (*executionContext)._ProjectConnection, (*executionContext).childFields_ProjectConnection),
		objectOf("TaskEdge", (*executionContext)._TaskEdge, (*executionContext).childFields_TaskEdge),
		objectOf("TaskConnection", (*executionContext)._TaskConnection, (*executionContext).childFields_TaskConnection),
		objectOf("CommentEdge", (*executionContext)._CommentEdge, (*executionContext).childFields_CommentEdge),
		objectOf("CommentConnection", (*executionContext)._CommentConnection, (*executionContext).childFields_CommentConnection),
		objectOf("ProjectEvent", (*executionContext)._ProjectEvent, (*executionContext).childFields_ProjectEvent),
		objectOf("SyncPage", (*executionContext)._SyncPage, (*executionContext).childFields_SyncPage),
		objectOf("Tombstone", (*executionContext)._Tombstone, (*executionContext).childFields_Tombstone),
	} {
		objects[k.Name] = k
	}
}

// childFunc is a generated function that makes the context of a field of
// one type.
type childFunc = func(*executionContext, context.Context, graphql.CollectedField) (*graphql.FieldContext, error)

// objectOf makes the Object of the type name, modelled by T.
func objectOf[T any](name string, exec func(*executionContext, context.Context, ast.SelectionSet, *T) graphql.Marshaler, child childFunc) Object {
	return Object{
		Name: name,
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

// Query resolves root fields (the object is nil).
var Query = Object{
	Name:  "Query",
	value: func(any) (any, bool) { return nil, true },
	exec: func(ec *executionContext, ctx context.Context, sel ast.SelectionSet, _ any) graphql.Marshaler {
		return ec._Query(ctx, sel)
	},
	child: func(*executionContext) func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) {
		return nil
	},
}

// ObjectOf returns the Object of v, a value of a field of type t (one of
// its possible types when it is abstract), and v as the Object's Exec
// takes it; false when v is nil or of no object type of t.
func ObjectOf(schema *ast.Schema, t string, v any) (Object, any, bool) {
	def := schema.Types[t]
	if def == nil {
		return Object{}, nil, false
	}
	if !def.IsAbstractType() {
		k, ok := objects[t]
		if !ok {
			return Object{}, nil, false
		}
		o, ok := k.value(v)
		return k, o, ok
	}
	for _, d := range schema.GetPossibleTypes(def) {
		if k, ok := objects[d.Name]; ok {
			if o, ok := k.value(v); ok {
				return k, o, true
			}
		}
	}
	return Object{}, nil, false
}
