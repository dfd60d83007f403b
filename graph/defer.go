package graph

import (
	"context"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Incremental delivery (@defer). gqlgen runs an operation's deferred
// fragments on goroutines of their own once the rest of their object is
// resolved and hands the transport one response per part: the initial
// part (the deferred fields left out), then each deferred fragment with
// its path and label, hasNext false on the last. The transports that
// deliver the parts are POST with Accept: multipart/mixed (the
// 2022-08-24 format Apollo Client's Defer20220824Handler and urql read),
// server-sent events and the WebSockets; plain POST answers one JSON body,
// so an operation with @defer is refused there before anything runs
// (deferDelivery) rather than answered with the deferred fields null.

// MediaTypesIncremental names the media types a POST must accept for an
// operation with @defer.
const MediaTypesIncremental = "multipart/mixed;deferSpec=20220824 or text/event-stream"

// msgDeferNeedsStream is the refusal of an operation with @defer over a
// transport that answers one JSON body.
const msgDeferNeedsStream = "the operation uses @defer, which this request cannot receive: send Accept: " + MediaTypesIncremental

// deferDelivery refuses, before anything runs, an operation that defers a
// fragment when its transport answers with one JSON body: BAD_REQUEST,
// HTTP 406, nothing read. It is the first operation-context mutator of the
// pipeline (operationStart's).
func deferDelivery(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || deliversParts(ctx, oc) || !defers(oc, oc.Operation.SelectionSet, map[string]bool{}) {
		return nil
	}
	if s, ok := ctx.Value(statusKey{}).(*httpStatus); ok {
		s.mu.Lock()
		s.status, s.noData = http.StatusNotAcceptable, true
		s.mu.Unlock()
	}
	return &gqlerror.Error{Message: msgDeferNeedsStream, Extensions: map[string]any{"code": CodeBadRequest}}
}

// deliversParts reports whether ctx's operation came over a transport that
// delivers several responses: a WebSocket, or a POST that accepts
// multipart/mixed or text/event-stream.
func deliversParts(ctx context.Context, oc *graphql.OperationContext) bool {
	accept := oc.Headers.Get("Accept")
	return streams(ctx, oc) || strings.Contains(accept, "multipart/mixed")
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
