package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// The dashboard with each project's tasks deferred, and the same query
// without @defer, for clients/defer/run.mjs.
const (
	deferClientsQuery = `query Dashboard { me { name projects(first: 10) { nodes { id name
		members { role user { id name } }
		... @defer(label: "tasks") { tasks(first: 5) { nodes { id title assignee { id name }
			comments(first: 5) { nodes { id body author { id name } } } } } } } } } }`
	plainClientsQuery = `query Dashboard { me { name projects(first: 10) { nodes { id name
		members { role user { id name } }
		tasks(first: 5) { nodes { id title assignee { id name }
			comments(first: 5) { nodes { id body author { id name } } } } } } } } }`
)

// TestDeferClients proves @defer with Apollo Client 4 (HttpLink with
// Defer20220824Handler and with GraphQL17Alpha9Handler: multipart/mixed in
// the 2022-08-24 format and in graphql-js 17's) and graphql-sse against an
// instance started in-process (clients/defer/run.mjs): the first result
// lacks the deferred part, the last equals the query without @defer. It
// needs the Node tools; without them it is skipped, unless CI is set.
func TestDeferClients(t *testing.T) {
	nodeModules := mustNodeTools(t)
	if _, err := os.Stat(filepath.Join(nodeModules, "@apollo", "client", "package.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node_modules has no @apollo/client: CI must have it (scripts/test installs the Node tools)")
		}
		t.Skip("node_modules has no @apollo/client; scripts/test installs the Node tools")
	}
	env := testenv.New(t)
	env.MustSeed(t)
	p := startLiveInstanceWith(t, env, mustStartNATS(t), nil)
	runNodeChecks(t, nodeModules, filepath.Join("clients", "defer", "run.mjs"), map[string]any{
		"url": p.URL + "/query", "token": env.Token(t, "alice"), "deferred": deferClientsQuery, "plain": plainClientsQuery, "waitMs": 20_000,
	})
}
