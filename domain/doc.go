// Package domain is what taskgraph is about, without how it is stored: the
// types of its objects (users, projects, memberships, tasks, comments,
// tags), the mutations' inputs and their checks, ids, dates, the error codes
// every layer returns, and the events of committed changes. It imports no
// other package of the project; the store (dynamo), the GraphQL layer
// (graph), live updates (live) and telemetry all import it.
package domain
