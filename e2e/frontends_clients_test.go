package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestFrontendClients proves the normalized caches' configurations in
// clients/ (Apollo Client 4 with clients/apollo/cache.ts, urql's graphcache
// with clients/urql/cache.ts, Relay with clients/relay) against an instance
// started in-process: clients/frontends compiled with tsc --strict (the
// configurations, the checks, graphql-codegen's typed documents and
// relay-compiler's artifacts), then run with node in development mode
// (Apollo's __DEV__ on through the "development" export condition,
// NODE_ENV=development), any console.warn or console.error failing the
// check it came in. For each library: a project's tasks paged forwards to
// the end and backwards from the end, a tag's page through node(id:)
// paged, mutations updating every screen without a refetch, a deleted
// task leaving every screen; for Apollo and graphcache, a control run
// without the configuration that must print their warnings. Each check is
// a subtest (clients/frontends/harness.ts prints them). It needs the Node
// tools; without them it is skipped, unless CI is set.
func TestFrontendClients(t *testing.T) {
	nodeModules := mustNodeTools(t)
	for _, pkg := range []string{"@apollo/client", "@urql/core", "@urql/exchange-graphcache", "relay-runtime", "typescript"} {
		if _, err := os.Stat(filepath.Join(nodeModules, pkg, "package.json")); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("node_modules has no %s: CI must have it (scripts/test installs the Node tools)", pkg)
			}
			t.Skipf("node_modules has no %s; scripts/test installs the Node tools", pkg)
		}
	}
	// urql's graphcache is configured with the server's schema, which is
	// not committed: scripts/clients writes it (scripts/test runs it first).
	if _, err := os.Stat(filepath.Join("clients", "urql", "schema.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("clients/urql/schema.json is not written: CI must have it (scripts/test runs scripts/clients --schemas)")
		}
		t.Skipf("clients/urql/schema.json is not written; scripts/clients --schemas writes it (scripts/test does)")
	}
	out := mustCompileChecks(t, nodeModules, filepath.Join("clients", "frontends", "tsconfig.json"))

	env := testenv.New(t)
	env.MustSeed(t)
	p := startLiveInstanceWith(t, env, mustStartNATS(t), nil)
	tokens := map[string]string{}
	for _, viewer := range []string{"alice", "bob", "carol", "dave"} {
		tokens[viewer] = env.Token(t, viewer)
	}
	runNodeChecksWith(t, nodeModules, map[string]any{"url": p.URL + "/query", "tokens": tokens, "waitMs": 20_000},
		[]string{"NODE_ENV=development"}, "--conditions=development", filepath.Join(out, "frontends", "run.js"))
}

// mustCompileChecks compiles a TypeScript project of checks with tsc into a
// temporary directory that resolves packages from nodeModules, and returns
// the directory; a type error fails the test with tsc's output.
func mustCompileChecks(t *testing.T, nodeModules, tsconfig string) string {
	t.Helper()
	out := t.TempDir()
	if err := os.Symlink(nodeModules, filepath.Join(out, "node_modules")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard: tsc takes seconds
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, filepath.Join(nodeModules, ".bin", "tsc"), "-p", tsconfig, "--outDir", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc -p %s: %v\n%s", tsconfig, err, b)
	}
	t.Logf("tsc -p %s: %v", tsconfig, time.Since(start).Round(time.Millisecond))
	return out
}
