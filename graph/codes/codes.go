// Package codes is the GraphQL API's error codes, the extensions.code of
// every error the server answers: the contract's and the server's own, in
// one place that every layer names them from (the operation pipeline's
// refusals, the resolvers' errors as the error presenter codes them, the
// @defer executor's, the subscriptions' ends, and web's refusals of what
// is no GraphQL request). docs/errors.md is the clients' guide to them.
// gqlgen's own codes (GRAPHQL_PARSE_FAILED, GRAPHQL_VALIDATION_FAILED)
// are its package errcode's.
package codes

import "github.com/taskgraph/taskgraph/domain"

// The contract's error codes.
const (
	Unauthenticated    = "UNAUTHENTICATED"
	Forbidden          = "FORBIDDEN"
	NotFound           = "NOT_FOUND"
	BadUserInput       = "BAD_USER_INPUT"
	Conflict           = "CONFLICT"
	ServiceUnavailable = "SERVICE_UNAVAILABLE"
	Internal           = "INTERNAL_SERVER_ERROR"
	Complexity         = "COMPLEXITY_LIMIT_EXCEEDED"
	SyncTokenExpired   = "SYNC_TOKEN_EXPIRED"
)

// The server's own codes, which extend the contract.
const (
	// BadRequest: an HTTP request that is no GraphQL request at all
	// (wrong method or media type, a body that is not JSON, no operation
	// to run).
	BadRequest = "BAD_REQUEST"
	// TooLarge: DynamoDB refused to store an item or a transaction as too
	// large (an item over 400 KB, a transaction over 4 MB). Every item a
	// user's input can grow is bounded well below (docs/security.md,
	// "Stored items"), so it should not happen; where it does, nothing
	// was written and retrying the same change fails the same way.
	TooLarge = "TOO_LARGE"
	// RateLimited: the viewer (or, without a valid token, the client
	// address) sent more operations, or more query cost, than its token
	// buckets allow; over HTTP a 429 with Retry-After.
	RateLimited = "RATE_LIMITED"
	// PersistedQueryNotFound: a documentId (or an automatic persisted
	// query's hash sent without its text) that the trusted documents do
	// not hold.
	PersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"
	// TrustedDocumentRequired: in production, a query text that is not
	// one of the trusted documents.
	TrustedDocumentRequired = "TRUSTED_DOCUMENT_REQUIRED"
)

var ofDomain = map[string]string{
	domain.ENOTFOUND:    NotFound,
	domain.EINVALID:     BadUserInput,
	domain.EFORBIDDEN:   Forbidden,
	domain.ECONFLICT:    Conflict,
	domain.EUNAVAILABLE: ServiceUnavailable,
	domain.EINTERNAL:    Internal,
	domain.EEXPIRED:     SyncTokenExpired,
	domain.ETOOLARGE:    TooLarge,
}

// OfDomain returns the code of a domain error's code (domain.ENOTFOUND:
// NotFound), or "" for a code it does not know.
func OfDomain(code string) string { return ofDomain[code] }
