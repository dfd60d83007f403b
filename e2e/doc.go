// Package e2e holds the end-to-end tests: the server started as its users
// start it (package app's App, as the binary's Run opens it, or the binary
// itself) and driven by what they use (HTTP, the npm clients graphql-ws,
// graphql-sse, Apollo Client, urql and Relay, the typed clients,
// graphql-http's audit, headless Chromium). Its code is its tests; they run
// from the repository's root (TestMain), as a user does.
package e2e
