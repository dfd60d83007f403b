package loaders

import (
	"context"
	"math"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Step mode is the tests' (they pin DynamoDB calls and round trips): an
// operation's batches are read when all its running work waits on a
// loader, not after a time. It reaches the handler through one hook,
// Config.Steps, which only tests and the benchmarks set; its
// implementation is internal/stepmode, a package only they import. Nil,
// as in production, every call below is a nil check.

// StepMode is the hook of step mode (Config.Steps).
type StepMode interface {
	// Operation starts one operation's step mode.
	Operation() OperationSteps
}

// OperationSteps is one operation's step mode.
type OperationSteps interface {
	// Field is the field middleware that counts each field of the
	// operation as it starts and ends.
	Field(ctx context.Context, next graphql.Resolver) (any, error)
	// Loader joins a loader of the operation, whose open batch flush
	// reads.
	Loader(flush func()) LoaderSteps
	// Part counts the fields of a part of a query with @defer that is
	// resolved apart, on a goroutine of its own, as about to start: those
	// sel selects on a value of type typ, whose field contexts child
	// makes (nil for the root type's); and, once they are done, the part
	// itself, until end is called (once what its end releases has
	// started). It returns the context to resolve them with.
	Part(ctx context.Context, typ string, sel ast.SelectionSet, child func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error)) (_ context.Context, end func())
}

// LoaderSteps is one loader's part in its operation's step mode.
type LoaderSteps interface {
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

// StepsOf returns the step mode of ctx's operation, or nil.
func StepsOf(ctx context.Context) OperationSteps {
	if l, _ := ctx.Value(ctxKey{}).(*Loaders); l != nil && l.steps != nil {
		return l.steps
	}
	return nil
}

// StepFields is the field middleware of step mode (added only with
// Config.Steps set).
func StepFields(ctx context.Context, next graphql.Resolver) (any, error) {
	if s := StepsOf(ctx); s != nil {
		return s.Field(ctx, next)
	}
	return next(ctx)
}

// stepWait is the batch window in step mode: never, in effect (batches are
// flushed).
const stepWait = time.Duration(math.MaxInt64)
