package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/app"
)

// Flags of the test binary (pass them after the package, with '=':
// go test ./bench -run '^TestReport$' -v -report -endpoint=http://…).
var (
	reportFlag   = flag.Bool("report", false, "run TestReport, the full benchmark report (several minutes)")
	endpoint     = flag.String("endpoint", "", "DynamoDB endpoint, e.g. http://127.0.0.1:8000 (default: the embedded store in a child process)")
	storePID     = flag.Int("storepid", 0, "report: process id of the store at -endpoint, to measure its CPU time (Linux)")
	quietFlag    = flag.Duration("quiet", DefaultQuiet, "the gate's quiet window (report and benchmarks)")
	scalesFlag   = flag.String("scales", "1,2,4", "report: dataset scales")
	clients      = flag.Int("clients", 32, "report: concurrent clients of a load run")
	budget       = flag.Duration("budget", 2*time.Second, "report: how long a load run keeps starting operations")
	minOps       = flag.Int("minops", 32, "report: operations a load run starts at least, divided by the scale")
	maxOps       = flag.Int("maxops", 5000, "report: operations a load run starts at most")
	repsFlag     = flag.Int("reps", 3, "report: gated runs per operation (batching on at every scale, other modes at 1×)")
	wideFlag     = flag.Bool("wide", true, "report: also count calls and round trips with a 20 ms batch window (every level one batch, as TestCallsAndRoundTrips)")
	opsFlag      = flag.String("ops", "", "report: regexp selecting operations by name (default: all)")
	baseline     = flag.Bool("baseline", true, "report: also measure with batching off (loaders.Config{NoBatch: true})")
	baselineLoad = flag.Int("baselineload", 1, "report: largest scale at which batching off gets load runs too (0: every scale); above it, gated counts only")
	outFlag      = flag.String("out", "", "report: also write the Markdown report to this file (relative to bench/)")
	scaleFlag    = flag.Int("scale", 1, "benchmarks: dataset scale")
)

func TestMain(m *testing.M) {
	ServeStoreIfAsked()       // the child process started by StartStoreProcess
	ServeSubscribersIfAsked() // the child process started by StartSubscribers
	app.TuneGC(os.Getenv)     // the server's GC settings (server.go's main)
	os.Exit(m.Run())
}

var tableN atomic.Int64

// newEnv returns an Env on a fresh table at the -endpoint, or on the
// embedded store in a child process of its own, seeded at scale.
func newEnv(tb testing.TB, scale int, quiet time.Duration) (*Env, func() (time.Duration, bool)) {
	tb.Helper()
	ctx := context.Background()
	ep := *endpoint
	var storeCPU func() (time.Duration, bool)
	if ep == "" {
		p, err := StartStoreProcess(ctx)
		if err != nil {
			tb.Fatalf("starting the store process: %v", err)
		}
		tb.Cleanup(p.Stop)
		ep, storeCPU = p.Endpoint, p.CPU
	}
	table := fmt.Sprintf("taskgraph-bench-%s-%d", strconv.FormatInt(time.Now().UnixNano()%1e9, 36), tableN.Add(1))
	env, err := Open(ctx, ep, table, quiet)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(env.Close)
	if *endpoint != "" {
		tb.Cleanup(func() { _ = env.DropTable(ctx) })
	}
	if err := env.Seed(ctx, scale); err != nil {
		tb.Fatal(err)
	}
	return env, storeCPU
}

// suiteOp returns the suite's operation of that name.
func suiteOp(tb testing.TB, name string) Op {
	tb.Helper()
	for _, op := range Suite() {
		if op.Name == name {
			return op
		}
	}
	tb.Fatalf("no operation %q in the suite", name)
	return Op{}
}
