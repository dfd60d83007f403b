package bench

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var (
	liveIdle    = flag.String("liveidle", "", "run TestLiveIdleFromOutside: idle subscribers with the npm clients, per run (e.g. 5000,19000)")
	liveClients = flag.String("liveclients", "graphql-ws,graphql-sse", "live idle: the npm clients measured")
)

// TestLiveIdleFromOutside measures idle subscribers as users' clients
// make them: node (bench/subscribers.mjs) opens -liveidle subscriptions
// with the npm graphql-ws client (one socket each) or graphql-sse client
// (distinct connections mode: one stream each) to instance B, changes
// through A until each has received one (all are live), and this process,
// the servers', reports what they added: heap in use and goroutine stacks
// after forced collections, goroutines; and node's resident memory.
//
//	go test ./bench -run '^TestLiveIdleFromOutside$' -v -timeout 30m -liveidle=5000,19000
//
// The npm clients come from the project's node_modules (npm ci).
func TestLiveIdleFromOutside(t *testing.T) {
	if *liveIdle == "" {
		t.Skip("the idle subscribers' measure runs with -liveidle=N,…")
	}
	nodeModules, err := filepath.Abs(filepath.Join("..", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(nodeModules, "graphql-ws", "package.json")); err != nil {
		t.Fatalf("no graphql-ws client in %s (npm ci): %v", nodeModules, err)
	}
	ctx := context.Background()
	env, _ := newEnv(t, 1, 0)
	natsURL := startNATS(t)
	a := httptest.NewServer(env.LiveHandler(t, natsURL))
	t.Cleanup(a.Close)
	b := httptest.NewServer(env.LiveHandler(t, natsURL))
	t.Cleanup(b.Close)
	project := env.Fixture.ProjectID
	task, err := env.CreateTask(ctx, a.URL, project, "live idle bench")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, client := range strings.Split(*liveClients, ",") {
		for _, f := range strings.Split(*liveIdle, ",") {
			n, _, err := parseRun(f)
			if err != nil {
				t.Fatalf("-liveidle: %v", err)
			}
			spec := SubscribersSpec{URL: b.URL + "/query", Token: env.Token(), Query: liveQuery, Vars: map[string]any{"p": project}, N: n}
			line := idleFromOutside(ctx, t, spec, client, nodeModules, func(title string) error {
				return env.RenameTask(ctx, a.URL, task, title)
			})
			fmt.Fprintln(&out, line)
			t.Log(line)
		}
	}
	fmt.Printf("8<\n%s8<\n", out.String())
}

// idleFromOutside runs one measure of TestLiveIdleFromOutside.
func idleFromOutside(ctx context.Context, t *testing.T, spec SubscribersSpec, client, nodeModules string, change func(title string) error) string {
	t.Helper()
	n := spec.N
	var m0, m1 runtime.MemStats
	steady(&m0)
	g0 := runtime.NumGoroutine()
	start := time.Now()
	subs, err := StartNodeSubscribers(ctx, spec, client, "subscribers.mjs", nodeModules)
	if err != nil {
		t.Fatal(err)
	}
	defer subs.Stop()
	warm, err := subs.Warm(ctx, spec, func(_ int, title string) error { return change(title) })
	if err != nil {
		t.Fatal(err)
	}
	setup := time.Since(start)
	time.Sleep(2 * time.Second) // what the last events left behind settles (a measure's pace, not a test's)
	steady(&m1)
	g1 := runtime.NumGoroutine()
	stack5 := settledStacks(m0, n)
	rss, err := subs.RSS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	heap := int64(m1.HeapInuse) - int64(m0.HeapInuse)
	live := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	stack := int64(m1.StackInuse) - int64(m0.StackInuse)
	return fmt.Sprintf("%d idle %s subscribers (npm client, one subscription a connection) on B: live in %s (%d warm-up changes); server heap in use +%s (%s a subscriber; its live objects %s), goroutine stacks +%s (%s a subscriber; %s after 5 collections), goroutines +%d (%.2f a subscriber); the node process: %s resident (%s a subscriber)",
		n, client, setup.Round(time.Millisecond), warm, mib(heap), kib(heap/int64(n)), kib(live/int64(n)), mib(stack), kib(stack/int64(n)), stack5,
		g1-g0, float64(g1-g0)/float64(n), mib(rss), kib(rss/int64(n)))
}
