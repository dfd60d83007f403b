package pipeline

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/subscription"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// requireViewer refuses, as a whole, any operation but pure introspection
// that comes without a valid token, or whose token has expired by the
// operation's start (a WebSocket's token was checked at connection_init,
// and its operations may come long after).
// The refusal never reaches reportCalls, so it logs its own line.
func requireViewer(log *slog.Logger, now func() time.Time) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		_, err := auth.Viewer(ctx)
		if v := auth.TokenOf(ctx); err == nil && !v.Exp.IsZero() && !now().Before(v.Exp) {
			err = subscription.ErrExpired // the message that ends a subscription too
		}
		if err != nil && !introspectionOnly(oc.Doc, oc.Operation.SelectionSet) {
			res := &graphql.Response{Errors: gqlerror.List{{
				Message: err.Error(), Extensions: map[string]any{"code": codes.Unauthenticated}}}}
			if st := operationState(ctx); st != nil {
				logOperation(ctx, log, res, st.calls)
			}
			return graphql.OneShot(res)
		}
		return next(ctx)
	}
}

func introspectionOnly(doc *ast.QueryDocument, set ast.SelectionSet) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if !strings.HasPrefix(s.Name, "__") {
				return false
			}
		case *ast.InlineFragment:
			if !introspectionOnly(doc, s.SelectionSet) {
				return false
			}
		case *ast.FragmentSpread:
			f := doc.Fragments.ForName(s.Name)
			if f == nil || !introspectionOnly(doc, f.SelectionSet) {
				return false
			}
		}
	}
	return true
}
