// Package client is how taskgraph's DynamoDB client is set up and observed:
// the production options (Options: retry policy, request deadlines, HTTP
// connection pool, a leaner SDK middleware stack), the one middleware that
// records each call (Record) for the observers of its context (Calls, the
// per-operation counter; metrics and spans in internal/telemetry), and the
// pool of goroutines that make the calls (Go). It knows nothing of the
// table's items; package dynamo is the store on such a client.
package client
