package graph

import (
	"context"
	"net/http"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Incremental delivery (@defer). gqlgen runs an operation's deferred
// fragments on goroutines of their own once the rest of their object is
// resolved and hands the transport one response per part: the initial
// part (the deferred fields left out), then each deferred fragment with
// its path and label, hasNext false on the last. The transports that
// deliver the parts are POST with Accept: multipart/mixed (in the format
// its Accept names: the 2022-08-24 one by default, graphql-js 17's for
// incrementalSpec=v0.2; web/multipart.go), server-sent events and the
// WebSockets (each part one message, as gqlgen hands it over: {data,
// path, label, hasNext}); each says so where it is
// registered (web's transports: its row's Delivery, which the request's
// context carries: TransportOf, capability.go). A query with @defer over a
// transport that answers one JSON body (plain POST, GET) is refused before
// anything runs (deferDelivery) rather than answered with the deferred
// fields null; so is @defer in a mutation or a subscription, on every
// transport. Its parts never outlive its request: incrementalSchema.

// MediaTypesIncremental names the media types a POST must accept for an
// operation with @defer.
const MediaTypesIncremental = "multipart/mixed;deferSpec=20220824, multipart/mixed;incrementalSpec=v0.2 or text/event-stream"

// The refusals of @defer (deferDelivery).
const (
	// msgDeferNeedsStream: a query with @defer over a transport that
	// answers one JSON body.
	msgDeferNeedsStream = "the operation uses @defer, which this request cannot receive: send a POST with Accept: " + MediaTypesIncremental
	// msgDeferInMutation and msgDeferInSubscription: @defer where the
	// server delivers no parts, whatever the transport.
	msgDeferInMutation     = "@defer is not supported in a mutation, whose answer is one response: remove it, or set its if argument to false"
	msgDeferInSubscription = "@defer is not supported in a subscription, whose every event is one response: remove it, or set its if argument to false"
)

// deferDelivery refuses, before anything runs, an operation that defers a
// fragment where its parts cannot be delivered: in a mutation or a
// subscription, GRAPHQL_VALIDATION_FAILED on every transport (as
// graphql-js's incremental-delivery validation refuses @defer in a
// subscription); in a query over a transport that answers one JSON body
// (plain POST, GET, whatever they accept), BAD_REQUEST with HTTP 406,
// naming the media types to accept. It is the first operation-context
// mutator of the pipeline (operationStart's).
func deferDelivery(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || !defers(oc, oc.Operation.SelectionSet, map[string]bool{}) {
		return nil
	}
	switch {
	case oc.Operation.Operation == ast.Mutation:
		return refusal(ctx, errcode.ValidationFailed, msgDeferInMutation)
	case oc.Operation.Operation == ast.Subscription:
		return refusal(ctx, errcode.ValidationFailed, msgDeferInSubscription)
	case deliveryOf(ctx) != OneResponse:
		return nil
	}
	if a := AnswerOf(ctx); a != nil {
		a.mu.Lock()
		a.status, a.noData = http.StatusNotAcceptable, true
		a.mu.Unlock()
	}
	return &gqlerror.Error{Message: msgDeferNeedsStream, Extensions: map[string]any{"code": CodeBadRequest}}
}

// defers reports whether set, or a fragment it spreads, has a fragment
// that @defer defers (its if argument not false).
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

// incrementalSchema is the generated executable schema, with the one
// change a query with @defer needs: none of its parts outlives its
// request, whatever its client does.
//
// gqlgen's generated Exec (generated.go, from gqlgen's template) answers
// the parts of a query with @defer from an unbuffered channel. Each
// deferred fragment, once resolved, sends its part on it unless the
// context it was resolved with is done (graphql.ExecutionContextState's
// ProcessDeferredGroup: a select between the send and ctx.Done()); the
// response handler, called by the transport once per part, receives from
// it while parts are pending, with no regard to any context. A fragment
// that finishes after its client has left (the request's context
// cancelled: a stream abandoned, an operation completed over a WebSocket)
// may drop its part (the select picks either ready case), and a transport
// that asked for the next part before the client left waits for it for
// ever: the operation's goroutine, and the multipart transport's 1 ms
// ticker with it.
//
// incrementalSchema therefore resolves such a query on a context that is
// never cancelled (context.WithoutCancel, its values kept), so that no
// fragment drops its part; its DynamoDB calls still end when the request
// does (client.WithCancelOf), so the fragments of a client that left fail
// at once and end; and once the request's context is done, the parts
// still pending are received and dropped (queryParts.drain), so that no
// fragment waits on its send either. Queries without @defer, mutations
// and subscriptions (which deferDelivery refuses with @defer) run as
// generated.
type incrementalSchema struct{ graphql.ExecutableSchema }

func (s incrementalSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Query || !defers(oc, oc.Operation.SelectionSet, map[string]bool{}) {
		return s.ExecutableSchema.Exec(ctx)
	}
	return (&queryParts{next: s.ExecutableSchema.Exec(ctx)}).respond
}

// queryParts hands out the parts of one query with @defer.
type queryParts struct {
	mu sync.Mutex
	// next is the generated response handler: called under mu, one call at
	// a time (the transport's, then drain's).
	next graphql.ResponseHandler
	// run is the context of the last call, never cancelled; stop
	// unregisters drain; done: next has answered nil.
	run  context.Context
	stop func() bool
	done bool
}

// respond answers the transport's call for the next part: the initial one
// first, resolved on a context that is not cancelled with ctx but whose
// DynamoDB calls are; nil once every part is out.
func (p *queryParts) respond(ctx context.Context) *graphql.Response {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return nil
	}
	// Every call's context carries that call's values (its response
	// context: the errors of the initial part are collected there).
	p.run = client.WithCancelOf(context.WithoutCancel(ctx), ctx)
	if p.stop == nil {
		p.stop = context.AfterFunc(ctx, p.drain)
	}
	res := p.next(p.run)
	if res == nil {
		p.done = true
		p.stop()
	}
	return res
}

// drain receives, once the request's context is done, the parts still
// pending, which no one will read: each fragment still resolving fails at
// its next DynamoDB call and sends its part, and drain returns when the
// last has. A transport's call already waiting for a part gets it first.
func (p *queryParts) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.done {
		p.done = p.next(p.run) == nil
	}
}
