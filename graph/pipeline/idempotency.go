package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/vektah/gqlparser/v2/ast"
)

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
