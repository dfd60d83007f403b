package loaders

import (
	"context"
	"math"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Dispatch by level: an operation's batches are read when all its running
// work waits on a loader (every field of a level has asked), not after a
// time, as graphql-java's per-level dispatch does. It reaches the loaders
// through one hook, Config.Dispatch, which the operation pipeline sets
// (pipeline.New: package graph/dispatch), and a live event's loaders,
// shared by its resolutions, use too (each resolution counted as a Part of
// the event's one OperationDispatch: graph/live.go); with it nil every call
// below is a nil check and the loaders read by window (Config.Wait: the
// benchmarks' comparison).

// Dispatcher is the hook of dispatch by level (Config.Dispatch).
type Dispatcher interface {
	// Operation starts dispatching one operation's batches.
	Operation() OperationDispatch
}

// OperationDispatch is one operation's dispatch by level.
type OperationDispatch interface {
	// Field is the field middleware that counts each field of the
	// operation as it starts and ends.
	Field(ctx context.Context, next graphql.Resolver) (any, error)
	// Loader joins a loader of the operation, whose open batch flush
	// reads.
	Loader(flush func()) LoaderDispatch
	// Part counts the fields of a part of a query with @defer that is
	// resolved apart, on a goroutine of its own, or of one resolution of
	// a live event (its subscription's root fields: typ "Subscription"),
	// as about to start: those sel selects on a value of type typ, whose
	// field contexts child makes (nil for the root type's); and, once
	// they are done, the part itself, until end is called (once what its
	// end releases has started). It returns the context to resolve them
	// with.
	Part(ctx context.Context, typ string, sel ast.SelectionSet, child func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error)) (_ context.Context, end func())
}

// LoaderDispatch is one loader's part in its operation's dispatch.
type LoaderDispatch interface {
	// Load calls load, which asks the loader for key; the returned
	// function is called when the caller starts waiting for its result.
	Load(ctx context.Context, key any, load func()) (wait func())
	// Prime calls prime unless key is loaded or loading already.
	Prime(key any, prime func())
	// Batch returns the context of a batch's read.
	Batch(ctx context.Context) context.Context
	// Read records that a batch of keys is read, before its callers wake.
	Read(keys []any)
}

// DispatchOf returns the dispatch of ctx's operation, or nil (no loaders,
// or loaders that read by window).
func DispatchOf(ctx context.Context) OperationDispatch {
	if l, _ := ctx.Value(ctxKey{}).(*Loaders); l != nil && l.levels != nil {
		return l.levels
	}
	return nil
}

// DispatchFields is the field middleware of dispatch by level (added when
// Config.Dispatch is set).
func DispatchFields(ctx context.Context, next graphql.Resolver) (any, error) {
	if !Counted(graphql.GetFieldContext(ctx)) {
		return next(ctx)
	}
	if s := DispatchOf(ctx); s != nil {
		return s.Field(ctx, next)
	}
	return next(ctx)
}

// Counted reports whether the dispatch counts the field of fc: every field
// but a plain leaf (a struct field or a method without a resolver and
// with nothing selected below it, not on a root type), which reads nothing
// and needs no count (about half of a list screen's fields).
func Counted(fc *graphql.FieldContext) bool {
	return fc == nil || fc.IsResolver || fc.IsMethod || len(fc.Field.Selections) > 0 ||
		fc.Object == "Query" || fc.Object == "Mutation" || fc.Object == "Subscription"
}

// dispatchWait is the batch window under dispatch by level: never, in
// effect (the dispatcher flushes the batches).
const dispatchWait = time.Duration(math.MaxInt64)
