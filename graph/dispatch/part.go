package dispatch

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// The parts of an operation resolved apart, each in a scope of its own
// under a marker context: a part of a query with @defer (graph's
// incremental execution) and a resolution of a live event, whose loaders
// all its resolutions share (graph/live.go, eventScope.Enter: the event's
// loaders are one operation of the dispatch, each resolution a part).

// Part counts the fields of a part of a query with @defer, resolved apart,
// or of a live event's resolution (loaders.OperationDispatch): those sel
// selects on a value of type typ, in gqlgen's order, in a scope of their
// own under a context of its own (a marker, which adds nothing to their
// path); once the scope is done, the part counts as running until end.
func (s *opDispatch) Part(ctx context.Context, typ string, sel ast.SelectionSet, child func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error)) (context.Context, func()) {
	marker := &graphql.FieldContext{Object: typ}
	ctx = graphql.WithFieldContext(ctx, marker)
	oc := graphql.GetOperationContext(ctx)
	var steps [][]string
	if child == nil {
		steps = rootSteps(oc, sel, typ)
	} else {
		steps = objectSteps(scratchContext(ctx), oc, sel, schema.Types[typ], child)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start(ctx)
	s.markers[marker] = true
	p := &partEnd{}
	if steps != nil {
		s.add(nil, []scopeSpec{{key: scopeKey{field: marker}, steps: steps, part: p}})
	}
	return ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if p.running {
			p.running = false
			s.idle(1)
		}
	}
}

// partEnd is the end of a part (Part): running from when its scope is
// done until the part's end is called.
type partEnd struct{ running bool }
