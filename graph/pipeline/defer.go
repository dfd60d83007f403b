package pipeline

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/incremental"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Incremental delivery (@defer). A query with @defer answers as
// graphql-js 17 does (graph/incremental): the initial part without the
// deferred fields, then each deferred fragment's, hasNext false on the
// last. The transports that deliver the parts are POST with Accept:
// multipart/mixed (in the format its Accept names: the 2022-08-24 one by
// default, graphql-js 17's for incrementalSpec=v0.2; web/multipart.go),
// server-sent events and the WebSockets (each incremental result one
// message, as gqlgen writes a response: {data, path, label, errors,
// hasNext}); each says so where it is registered (web's transports: its
// row's Delivery, which the request's context carries: TransportOf,
// transport.go). A query with @defer over a transport that answers one
// JSON body (plain POST, GET) is refused before anything runs
// (deferDelivery); so is @defer in a mutation or a subscription, on every
// transport.

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
// (plain POST, GET, whatever they accept), BAD_REQUEST
// (RefusedUndeliverable: over HTTP a 406),
// naming the media types to accept. It is the first operation-context
// mutator of the pipeline (operationStart's).
func deferDelivery(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if msg := deferLabels(oc.Doc); msg != "" {
		return refusal(ctx, errcode.ValidationFailed, msg)
	}
	if oc.Operation == nil || !incremental.Defers(oc, oc.Operation.SelectionSet) {
		return nil
	}
	switch {
	case oc.Operation.Operation == ast.Mutation:
		return refusal(ctx, errcode.ValidationFailed, msgDeferInMutation)
	case oc.Operation.Operation == ast.Subscription:
		return refusal(ctx, errcode.ValidationFailed, msgDeferInSubscription)
	case DeliveryOf(ctx) != OneResponse:
		return nil
	}
	refuse(ctx, RefusedUndeliverable, 0, true)
	return &gqlerror.Error{Message: msgDeferNeedsStream, Extensions: map[string]any{"code": codes.BadRequest}}
}

// deferLabels is graphql-js 17's validation of @defer's labels
// (DeferStreamDirectiveLabelRule), in its words: each a static string,
// none used twice in the document (a part is known by its label). It
// returns the first refusal, or "".
func deferLabels(doc *ast.QueryDocument) string {
	if doc == nil {
		return ""
	}
	seen := map[string]bool{}
	var walk func(set ast.SelectionSet) string
	check := func(directives ast.DirectiveList) string {
		for _, d := range directives {
			arg := d.Arguments.ForName("label")
			if d.Name != "defer" || arg == nil || arg.Value == nil || arg.Value.Kind == ast.NullValue {
				continue
			}
			if arg.Value.Kind != ast.StringValue && arg.Value.Kind != ast.BlockValue {
				return `Argument "@defer(label:)" must be a static string.`
			}
			if seen[arg.Value.Raw] {
				return `Value for arguments "defer(label:)" and "stream(label:)" must be unique across all Defer/Stream directive usages.`
			}
			seen[arg.Value.Raw] = true
		}
		return ""
	}
	walk = func(set ast.SelectionSet) string {
		for _, sel := range set {
			var msg string
			switch s := sel.(type) {
			case *ast.Field:
				msg = walk(s.SelectionSet)
			case *ast.InlineFragment:
				if msg = check(s.Directives); msg == "" {
					msg = walk(s.SelectionSet)
				}
			case *ast.FragmentSpread:
				msg = check(s.Directives)
			}
			if msg != "" {
				return msg
			}
		}
		return ""
	}
	for _, op := range doc.Operations {
		if msg := walk(op.SelectionSet); msg != "" {
			return msg
		}
	}
	for _, f := range doc.Fragments {
		if msg := walk(f.SelectionSet); msg != "" {
			return msg
		}
	}
	return ""
}
