package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/cost"
	"github.com/taskgraph/taskgraph/graph/exec"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/syncer"
)

// NewExecutableSchema returns the schema's generated executor (graph/exec)
// on the resolvers r, each list priced for the complexity limit by the
// schema's cost directives (priced): what the operation pipeline wraps
// (pipeline.New), and what r's subscriptions resolve their events with.
func NewExecutableSchema(r *Resolver) graphql.ExecutableSchema {
	es := priced{exec.NewExecutableSchema(exec.Config{Resolvers: r}), Weights()}
	if r.subs != nil {
		r.subs.SetSchema(es)
	}
	return es
}

// Weights are the cost directives of schema.graphqls (@cost, @listSize;
// graph/cost), which the complexity limit and the actual cost both read.
func Weights() *cost.Weights { return cost.MustRead(exec.NewExecutableSchema(exec.Config{}).Schema()) }

// priced is an executor whose every field with @listSize is priced by its
// cost directives (graph/cost), whatever its type and arguments: a
// connection its page size (the larger of first and last given, at most
// dynamo.MaxFirst) times its selection, a list without slicing arguments
// its assumedSize times its element's. A new list field is priced by the
// directive it carries in schema.graphqls, with no code here. A sync page
// costs more than its directive says (syncer.Cost: the projects it reads
// besides). Other fields keep the generated executor's complexity.
type priced struct {
	graphql.ExecutableSchema
	w *cost.Weights
}

// Unwrap is the generated executor (exec.NewExecutor resolves @defer's
// parts with it).
func (p priced) Unwrap() graphql.ExecutableSchema { return p.ExecutableSchema }

// Complexity is the field's price for the complexity limit (gqlgen's
// ExecutableSchema.Complexity); args are the field's arguments as given,
// its slicing arguments read as gqlgen's Int reads them.
func (p priced) Complexity(ctx context.Context, typ, field string, child int, args map[string]any) (int, bool) {
	f := p.w.Field(typ, field)
	if !f.List {
		return p.ExecutableSchema.Complexity(ctx, typ, field, child, args)
	}
	first, last := intArg(args["first"]), intArg(args["last"])
	n := f.Estimate(child, f.Size(pageArgs(first, last), dynamo.MaxFirst))
	if typ == "Query" && field == "sync" { // what a page may read and answer
		n = max(n, syncer.Cost(child, first))
	}
	return n, true
}

// intArg is a slicing argument's value (nil: not given, null, or no Int,
// which validation refuses before any price is asked).
func intArg(v any) *int {
	if v == nil {
		return nil
	}
	n, err := graphql.UnmarshalInt(v)
	if err != nil {
		return nil
	}
	return &n
}

// pageArgs are a list's slicing arguments as cost.Field.Size reads them: a
// backward page's last, or else first, its default when null (as the
// loaders read them: loaders.PageSize). first and last together are
// refused before anything runs (the pipeline's pageArguments).
func pageArgs(first, last *int) func(string) (int, bool) {
	return func(name string) (int, bool) {
		switch {
		case last != nil:
			return *last, name == "last"
		case name == "first":
			return loaders.PageSize(first, nil), true
		}
		return 0, false
	}
}
