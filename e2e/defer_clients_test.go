package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// deferViewers are the viewers of the @defer corpus (clients/defer/corpus.graphql):
// the demo users, and erin, who has no profile (me fails for her).
var deferViewers = []string{"alice", "bob", "carol", "erin"}

// startDeferInstance starts an instance on the demo data for the @defer
// corpus and returns the LIVE_CONFIG of its scripts: its /query URL and a
// token per viewer. It needs the Node tools, graphql17 (graphql-js 17.1.0)
// and the clients among them; without them the test is skipped, unless CI
// is set.
func startDeferInstance(t *testing.T) (string, map[string]any) {
	t.Helper()
	nodeModules := mustNodeTools(t)
	for _, pkg := range []string{"graphql17", "@apollo/client", "@urql/core"} {
		if _, err := os.Stat(filepath.Join(nodeModules, pkg, "package.json")); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("node_modules has no %s: CI must have it (scripts/test installs the Node tools)", pkg)
			}
			t.Skipf("node_modules has no %s; scripts/test installs the Node tools", pkg)
		}
	}
	env := testenv.New(t)
	env.MustSeed(t)
	p := startLiveInstanceWith(t, env, mustStartNATS(t), nil)
	tokens := map[string]string{}
	for _, v := range deferViewers {
		tokens[v] = env.Token(t, v)
	}
	return nodeModules, map[string]any{"url": p.URL + "/query", "tokens": tokens, "waitMs": 20_000}
}

// TestDeferMatchesGraphQLJS is the differential test of @defer
// (clients/defer/differential.mjs): on each query of the corpus, what the
// server sends over multipart/mixed in graphql-js 17's format
// (incrementalSpec=v0.2) and in the 2022-08-24 one (deferSpec=20220824)
// equals what graphql-js 17.1.0 sends (experimentalExecuteIncrementally,
// legacyExecuteIncrementally) for the same schema, document, variables and
// data, up to what the format lets vary (ids, the order of independent
// payloads, their batching). One check per query and format.
func TestDeferMatchesGraphQLJS(t *testing.T) {
	nodeModules, cfg := startDeferInstance(t)
	runNodeChecks(t, nodeModules, filepath.Join("clients", "defer", "differential.mjs"), cfg)
}

// TestDeferClients proves @defer with the clients our users use, on the
// corpus (clients/defer/run.mjs): Apollo Client 4 with
// Defer20220824Handler and with GraphQL17Alpha9Handler, urql over
// server-sent events (its own Accept) and over multipart/mixed in
// graphql-js 17's format, and graphql-sse. Each ends where the same
// library fed graphql-js 17.1.0's own payloads ends, its first result
// lacking exactly the deferred fields, its last one, for a query without
// errors, equal to the query without @defer; no warning printed.
func TestDeferClients(t *testing.T) {
	nodeModules, cfg := startDeferInstance(t)
	runNodeChecks(t, nodeModules, filepath.Join("clients", "defer", "run.mjs"), cfg)
}
