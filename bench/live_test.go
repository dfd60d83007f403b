package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

var (
	liveFlag    = flag.Bool("live", false, "run TestLiveReport, the live-updates benchmark (a few minutes)")
	liveSubs    = flag.String("livesubs", "1000,10000", "live: concurrent subscribers on one instance, per run: N (one project) or N/K (over K projects)")
	liveSamples = flag.Int("livesamples", 200, "live: changes timed for the delivery latency")
	liveEvents  = flag.Int("liveevents", 20, "live: changes fanned out to every subscriber per run")
	liveFanout  = flag.Int("livefanout", 200, "live: subscribers of the DynamoDB-calls-per-event run")
	liveProfile = flag.String("liveprofile", "", "live: write a CPU profile of each -livesubs run's changes to this prefix + N.pprof")
)

// liveQuery is the subscription every benchmark subscriber runs: the
// issue's `task { id title status version assignee { id name } }`.
const liveQuery = `subscription Bench($p: ID!) { projectEvents(projectId: $p) {
	cursor kind task { id title status version assignee { id name } } } }`

// TestLiveReport measures live updates on the real stack: two instances A
// and B (the real handler, httptest servers) on one table of the store
// process and one NATS server with JetStream (in this process, on a
// loopback port), subscribers over real WebSockets:
//
//   - delivery latency: a change made through A, from its answer to the
//     event on a subscriber of B (p50, p99 of -livesamples changes);
//
//   - DynamoDB calls per fanned-out event: one updateTask delivered to
//     -livefanout subscribers, the mutation included;
//
//   - -livesubs subscribers on B, in a child process (so that this
//     process's heap, goroutines and CPU are the servers'): heap and
//     goroutines per subscriber, CPU per delivered event, time from a
//     change's answer until every subscriber has it.
//
//     go test ./bench -run '^TestLiveReport$' -v -timeout 30m -live
func TestLiveReport(t *testing.T) {
	if !*liveFlag {
		t.Skip("the live-updates benchmark runs with -live")
	}
	ctx := context.Background()
	env, _ := newEnv(t, 1, 0)
	natsURL := startNATS(t)
	a := httptest.NewServer(env.LiveHandler(t, natsURL))
	t.Cleanup(a.Close)
	b := httptest.NewServer(env.LiveHandler(t, natsURL))
	t.Cleanup(b.Close)
	project := env.Fixture.ProjectID
	task, err := env.CreateTask(ctx, a.URL, project, "live bench")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"p": project}

	var out strings.Builder
	report := func(format string, args ...any) {
		fmt.Fprintf(&out, format+"\n", args...)
		t.Logf(format, args...)
	}
	rename := func(h string, title string) error {
		return env.RenameTask(ctx, h, task, title)
	}

	// Delivery latency: one subscriber on B, changes through A.
	{
		var mu sync.Mutex
		arrived := map[string]chan time.Time{}
		wait := func(title string) chan time.Time {
			mu.Lock()
			defer mu.Unlock()
			if arrived[title] == nil {
				arrived[title] = make(chan time.Time, 1)
			}
			return arrived[title]
		}
		var closed atomic.Bool
		sub, err := Subscribe(ctx, b.URL+"/query", env.Token(), liveQuery, vars, func(p json.RawMessage) {
			now := time.Now()
			if title := eventTitle(p); title != "" {
				select {
				case wait(title) <- now:
				default:
				}
			}
		}, func(err error) {
			if err != nil && !closed.Load() {
				t.Logf("the latency subscriber ended: %v", err)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; ; i++ { // until the subscription runs
			title := fmt.Sprintf("latency warm-up %d", i)
			if err := rename(a.URL, title); err != nil {
				t.Fatal(err)
			}
			select {
			case <-wait(title):
			case <-time.After(time.Duration(i) * 100 * time.Millisecond):
				if i == 50 {
					t.Fatal("the latency subscriber received nothing")
				}
				continue
			}
			break
		}
		lats := make([]time.Duration, 0, *liveSamples)
		for i := range *liveSamples {
			title := fmt.Sprintf("latency %d", i)
			ch := wait(title)
			if err := rename(a.URL, title); err != nil {
				t.Fatal(err)
			}
			answered := time.Now()
			select {
			case at := <-ch:
				lats = append(lats, max(at.Sub(answered), 0))
			case <-time.After(30 * time.Second):
				t.Fatalf("change %d never reached B", i)
			}
		}
		closed.Store(true)
		sub.Close()
		slices.Sort(lats)
		report("delivery latency, A's answer → event on B (%d changes, one at a time): p50 %s, p99 %s, max %s",
			len(lats), msec(pct(lats, 50)), msec(pct(lats, 99)), msec(lats[len(lats)-1]))
	}

	// DynamoDB calls of one change fanned out to -livefanout subscribers.
	{
		n := *liveFanout
		subs, err := StartSubscribers(ctx, SubscribersSpec{URL: b.URL + "/query", Token: env.Token(), Query: liveQuery, Vars: vars, N: n})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := subs.Warm(ctx, SubscribersSpec{N: n}, func(_ int, title string) error { return rename(a.URL, title) }); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			title := fmt.Sprintf("fan-out %d", i)
			env.Settle()
			before := env.Calls.Snapshot()
			if err := rename(a.URL, title); err != nil {
				t.Fatal(err)
			}
			if _, err := subs.WaitSeen(ctx, n, title); err != nil {
				t.Fatal(err)
			}
			env.Settle() // the outbox item's background delete
			calls := env.Calls.Snapshot().Sub(before)
			report("one updateTask delivered to %d subscribers on B (made through A): %d DynamoDB calls (%s)", n, calls.Total(), calls)
		}
		subs.Stop()
	}

	// Many subscribers on one instance, over one project or several.
	for _, f := range strings.Split(*liveSubs, ",") {
		n, k, err := parseRun(f)
		if err != nil {
			t.Fatalf("-livesubs: %v", err)
		}
		projects := []string{project}
		tasks := []string{task}
		for j := len(projects); j < k; j++ {
			p, tk, err := env.CreateProjectWithTask(ctx, a.URL, fmt.Sprintf("live bench %d", j))
			if err != nil {
				t.Fatal(err)
			}
			projects, tasks = append(projects, p), append(tasks, tk)
		}
		r := manySubscribers(ctx, t, SubscribersSpec{URL: b.URL + "/query", Token: env.Token(), Query: liveQuery,
			Vars: vars, ProjectIDs: projects[:k], N: n}, env.FanOuts, func(j int, title string) error {
			return env.RenameTask(ctx, a.URL, tasks[j], title)
		})
		report("%s", r.memory)
		report("%s", r.delivery)
	}
	fmt.Printf("8<\n%s8<\n", out.String())
}

func eventTitle(p json.RawMessage) string {
	var ev struct {
		Data struct {
			ProjectEvents struct{ Task *struct{ Title string } }
		}
	}
	if json.Unmarshal(p, &ev) != nil || ev.Data.ProjectEvents.Task == nil {
		return ""
	}
	return ev.Data.ProjectEvents.Task.Title
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func must(d time.Duration, ok bool) time.Duration {
	if !ok {
		return 0
	}
	return d
}

func msec(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
func us(d time.Duration) string   { return fmt.Sprintf("%.0f µs", float64(d)/1e3) }
func mib(b int64) string          { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
func kib(b int64) string          { return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10)) }

// startNATS starts a NATS server with JetStream on a loopback port, its
// store in a temporary directory, and returns its URL: the broker both
// instances share.
func startNATS(tb testing.TB) string {
	tb.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: tb.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		tb.Fatal(err)
	}
	s.Start()
	tb.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(30 * time.Second) {
		tb.Fatal("the NATS server did not start")
	}
	return s.ClientURL()
}
