package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/graph/etag"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

// DefaultHTTPCacheSettle is Limits.HTTPCacheSettle's default beyond the
// operations' timeout: the replicas' lag (DynamoDB's eventually consistent
// reads and global secondary indexes: usually well under a second).
const DefaultHTTPCacheSettle = 2 * time.Second

// httpCache is HTTP caching of the queries a GET asks (graph/etag; the
// transport puts an etag.Request in the operation's context): before the
// query runs, the check of the client's tag, which answers 304 Not
// Modified without running it; around each field, the record of what the
// answer shows; after the answer, its tag. Mutations and subscriptions
// never (a GET runs queries only).
type httpCache struct {
	check *etag.Checker
	now   func() time.Time
	log   *slog.Logger
}

func newHTTPCache(o Options, es graphql.ExecutableSchema) *httpCache {
	settle := o.HTTPCacheSettle
	if settle == 0 {
		settle = cmp.Or(o.Timeout, DefaultTimeout) + DefaultHTTPCacheSettle
	}
	return &httpCache{check: &etag.Checker{Store: o.Store, Settle: settle, Build: buildOf(es.Schema()), Now: o.Now}, now: o.Now,
		log: o.Log}
}

// operation checks the client's tag, or starts the record.
func (h *httpCache) operation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	r := etag.From(ctx)
	if r == nil || graphql.GetOperationContext(ctx).Operation.Operation != ast.Query {
		return next(ctx)
	}
	if h.check.Check(ctx, r) {
		// The transport answers 304: nothing ran, and no response
		// middleware sees it, so its line (with what the check read) is
		// written here.
		if st := operationState(ctx); st != nil && h.log != nil {
			logNotModified(ctx, h.log, st.calls)
		}
		return graphql.OneShot(&graphql.Response{})
	}
	r.Begin(h.now())
	return next(ctx)
}

// field records what each field's value shows.
func (h *httpCache) field(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if r := etag.From(ctx); r != nil {
		r.Field(ctx, graphql.GetFieldContext(ctx), res, err)
	}
	return res, err
}

// response issues the answer's tag, its reads counted with the operation's.
func (h *httpCache) response(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	res := next(ctx)
	if r := etag.From(ctx); r != nil && !r.NotModified() {
		h.check.Issue(ctx, r, loaders.Of(ctx), res)
	}
	return res
}

// buildOf names a build by its schema and, when the binary knows it, its
// revision: answers of another build may differ, so its tags do too.
func buildOf(s *ast.Schema) string {
	var b bytes.Buffer
	formatter.NewFormatter(&b).FormatSchema(s)
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range bi.Settings {
			if kv.Key == "vcs.revision" || kv.Key == "vcs.modified" {
				b.WriteString("\n" + kv.Key + "=" + kv.Value)
			}
		}
	}
	sum := sha256.Sum256(b.Bytes())
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}
