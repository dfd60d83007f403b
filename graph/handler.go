package graph

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/subscription"
	"github.com/taskgraph/taskgraph/graph/syncer"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Assumed sizes of lists that take no `first`, for the cost estimate.
const (
	membersCost = 20
	tagsCost    = domain.MaxTagsOnTask
)

// NewServer returns the GraphQL executor with the operation pipeline
// (pipeline.go), every step in the order it runs, and no transport: the
// HTTP side (web.NewHandler) adds its transports, each of which hands its
// operations to this one pipeline, and its own middleware.
func NewServer(o Options) *handler.Server {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.MaxSubscriptionsPerSocket = cmp.Or(o.MaxSubscriptionsPerSocket, DefaultMaxSubscriptionsPerSocket)
	o.MaxSubscriptionsPerViewer = cmp.Or(o.MaxSubscriptionsPerViewer, DefaultMaxSubscriptionsPerViewer)
	rl := newRateLimits(o)
	subs := newSubscriptions(o, rl)
	cfg := Config{Resolvers: &Resolver{Store: o.Store, subs: subs, sync: newSyncer(o)}}
	setComplexity(&cfg.Complexity)
	es := NewExecutableSchema(cfg)
	subs.SetSchema(es)
	// A query's @defer parts end with its request (defer.go).
	srv := handler.New(incrementalSchema{es})
	cache := lru.New[*ast.QueryDocument](1000)
	srv.SetQueryCache(cache)
	srv.SetParserTokenLimit(cmp.Or(o.MaxTokens, DefaultMaxTokens))
	if o.Production {
		noSuggestions(srv) // no "Did you mean" where introspection is off (suggestions.go)
	}
	srv.SetErrorPresenter(ErrorPresenter(o.Log))
	srv.SetRecoverFunc(Recover(o.Log))

	// The operation pipeline (pipeline.go), in the order it runs: every
	// transport's operations pass through all of it.
	// 1. Before parsing.
	srv.Use(operationStart{})
	if rl != nil {
		srv.Use(rl) // one operation token before parsing; its cost comes after the complexity limit
	}
	if o.TrustedDocuments != nil {
		srv.Use(trustedDocuments{docs: o.TrustedDocuments, enforce: o.Production})
	}
	srv.Use(requireQuery{})              // a document to run: 400 without
	srv.Use(newDocumentLimits(o, cache)) // bounds what parsing and validation cost
	// 2. Parsing and validation (gqlgen's, cached by document text).
	// 3. After parsing and validation.
	if !o.Production {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.FixedComplexityLimit(cmp.Or(o.ComplexityLimit, DefaultComplexityLimit)))
	srv.Use(shapeLimits{MaxDepth: cmp.Or(o.MaxDepth, DefaultMaxDepth), MaxAliases: cmp.Or(o.MaxAliases, DefaultMaxAliases),
		NoIntrospection: o.Production})
	srv.Use(strictInputs{schema: es.Schema()})
	srv.Use(pageArguments{}) // first with last: BAD_USER_INPUT, nothing read
	if rl != nil {
		srv.Use(rateCost{rl})
	}
	// Subscriptions' own cost limit (it reads the complexity).
	srv.Use(newSubscriptionLimits(o))
	// 4. Around the operation, outermost first.
	if o.Telemetry != nil {
		srv.AroundOperations(observeOperations(o.Telemetry))
	}
	srv.AroundOperations(operationScope(o, cmp.Or(o.Timeout, DefaultTimeout)))
	srv.AroundOperations(requireViewer(o.Log, o.Auth.Clock()))
	srv.AroundOperations(liveOperations(o))
	srv.AroundRootFields(idempotent)
	srv.AroundFields(eventFields)
	if o.Loaders.Steps != nil {
		srv.AroundFields(loaders.StepFields) // step mode: counts the fields that run
	}
	// 5. Around each response.
	srv.AroundResponses(reportCalls(o.Log, o.Debug))
	srv.AroundResponses(requestErrors) // a request error: its HTTP status, no data entry
	return srv
}

// reportCalls logs one line per operation (logOperation: name, type,
// duration, DynamoDB calls, outcome, trace id) and, in debug mode, adds them to the response as extensions.dynamodb.
func reportCalls(log *slog.Logger, debug bool) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		res := next(ctx)
		st := operationState(ctx)
		if res == nil || st == nil || isSubscription(ctx) { // not a line per event
			return res
		}
		calls := st.calls
		logOperation(ctx, log, res, calls)
		if debug {
			byOp, total := calls.ByOp(), calls.Total()
			if res.Extensions == nil {
				res.Extensions = map[string]any{}
			}
			read, write := calls.Capacity()
			res.Extensions["dynamodb"] = map[string]any{"calls": byOp, "total": total, "readUnits": read, "writeUnits": write}
		}
		return res
	}
}

// IdempotencyHeader names the request header that carries a client's
// idempotency key: a mutation sent again with the same key (a retry after a
// timeout) has one effect and answers like the first call.
const IdempotencyHeader = "Idempotency-Key"

type idemHeaderKey struct{}

// idempotent gives each mutation field of a request that carries an
// idempotency key that key, scoped by the field's alias, with a digest of
// the operation: the field's name and its arguments, variables substituted,
// as canonical JSON (object keys sorted). A retry must send the same field
// and input; the selection set may differ.
func idempotent(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	key, _ := ctx.Value(idemHeaderKey{}).(string)
	rf := graphql.GetRootFieldContext(ctx)
	if key == "" || rf == nil || graphql.GetOperationContext(ctx).Operation.Operation != ast.Mutation {
		return next(ctx)
	}
	viewer, err := auth.Viewer(ctx)
	var digest string
	if err == nil {
		digest, err = operationDigest(ctx, rf.Field)
	}
	if err == nil {
		ctx, err = dynamo.WithIdempotencyKey(ctx, viewer, key, rf.Field.Alias, digest)
	}
	if err != nil {
		graphql.AddError(ctx, err)
		return graphql.Null
	}
	return next(ctx)
}

// operationDigest identifies a root field's operation: its name and its
// arguments with the request's variables substituted.
func operationDigest(ctx context.Context, f graphql.CollectedField) (string, error) {
	args, err := json.Marshal(f.ArgumentMap(graphql.GetOperationContext(ctx).Variables))
	if err != nil { // arguments come from JSON and the document: never seen
		return "", &domain.Error{Code: domain.EINTERNAL, Message: "digesting a mutation's input", Err: err}
	}
	sum := sha256.Sum256(append([]byte(f.Name+"\x00"), args...))
	return hex.EncodeToString(sum[:]), nil
}

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
			err = subscription.ErrExpired
		}
		if err != nil && !introspectionOnly(oc.Doc, oc.Operation.SelectionSet) {
			res := &graphql.Response{Errors: gqlerror.List{{
				Message: err.Error(), Extensions: map[string]any{"code": CodeUnauthenticated}}}}
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

// setComplexity makes a connection cost its page size (first, or last when
// given) times its children.
func setComplexity(c *ComplexityRoot) {
	page := func(child int, first, last *int) int {
		return 1 + child*max(min(loaders.PageSize(first, last), dynamo.MaxFirst), 1)
	}
	c.User.Projects = func(child int, first *int, _ *string, last *int, _ *string) int { return page(child, first, last) }
	c.User.AssignedTasks = func(child int, first *int, _ *string, last *int, _ *string) int { return page(child, first, last) }
	c.User.OverdueTasks = func(child int, _ *domain.Date, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Project.Tasks = func(child int, first *int, _ *string, last *int, _ *string, _ *domain.TaskStatus) int {
		return page(child, first, last)
	}
	c.Project.Members = func(child int) int { return 1 + child*membersCost }
	c.Task.Comments = func(child int, first *int, _ *string, last *int, _ *string) int { return page(child, first, last) }
	c.Task.TagList = func(child int) int { return 1 + child*tagsCost } // Task.tags
	c.Tag.Tasks = func(child int, first *int, _ *string, last *int, _ *string) int { return page(child, first, last) }
	c.Query.TasksByTag = func(child int, _ string, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Query.Sync = func(child int, _ *string, first *int) int { return syncer.Cost(child, first) } // what a page may read and answer
}
