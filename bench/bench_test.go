package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
)

// BenchmarkSuite runs each suite operation on its own, one request after
// another (ns/op is the latency of an operation with nothing else going
// on), with batching on and off, on the dataset at -scale (default 1). Per
// operation it reports the DynamoDB calls (in all and by type), the round
// trips (of one gated run before the timed ones), the CPU time of this
// process (the server and the small load driver) and of the store process,
// the goroutines started per operation, and the modelled latency (B/op and
// allocs/op are the testing package's). The 32-client figures are in the report
// (TestReport).
//
//	go test ./bench -run '^$' -bench . -benchtime 10x
//	go test ./bench -run '^$' -bench 'Suite/batching=on/dashboard' -scale 4 -benchtime 3x
//
// scripts/benchcpu runs it for two commits, alternating, and tabulates
// server CPU, allocations and goroutines per operation side by side
// (CPUTable).
func BenchmarkSuite(b *testing.B) {
	env, storeCPU := newEnv(b, *scaleFlag, *quietFlag)
	ctx := context.Background()
	for _, m := range []Mode{Batched, Unbatched} {
		h := env.Handler(m)
		mode := "batching=" + strings.TrimPrefix(m.Name, "batching ")
		for _, op := range Suite() {
			b.Run(mode+"/"+op.Name, func(b *testing.B) {
				count, err := env.Count(ctx, h, op)
				if err != nil {
					b.Fatal(err)
				}
				body := op.Body(env.Fixture)
				var w Recorder
				calls0, cpu0, gr0 := env.Calls.Snapshot(), selfCPU(), goroutinesCreated()
				var store0 time.Duration
				if storeCPU != nil {
					store0, _ = storeCPU()
				}
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					if err := env.Do(ctx, h, body, &w); err != nil {
						b.Fatal(err)
					}
					n++
				}
				perOp := func(v float64) float64 { return v / float64(n) }
				cpu := time.Duration(perOp(float64(selfCPU() - cpu0)))
				b.ReportMetric(perOp(float64(goroutinesCreated()-gr0)), "goroutines/op")
				calls := env.Calls.Snapshot().Sub(calls0)
				b.ReportMetric(perOp(float64(calls.Total())), "calls/op")
				for _, name := range []string{"GetItem", "BatchGetItem", "Query"} {
					b.ReportMetric(perOp(float64(calls[name])), name+"/op")
				}
				b.ReportMetric(float64(count.RoundTrips), "roundtrips/op")
				b.ReportMetric(float64(cpu)/1e6, "server-cpu-ms/op")
				if storeCPU != nil {
					s1, _ := storeCPU()
					b.ReportMetric(perOp(float64(s1-store0))/1e6, "store-cpu-ms/op")
				}
				modelled := time.Duration(count.RoundTrips)*(Latency+m.BatchWait()) + cpu
				b.ReportMetric(float64(modelled)/1e6, "modelled-ms/op")
			})
		}
	}
}

// BenchmarkCall measures one DynamoDB call on its own: a page of five
// comments of a task (dynamo.Store.CommentsOf, one Query, what the
// dashboard reads per task), through the server's client options and store,
// one call after another. server-cpu-us/call is this process's CPU time per
// call (the SDK: serialising, signing, its middleware, the HTTP client and
// its system calls, decoding), the store being in another process; it is
// the floor under an operation's CPU of its calls × this.
//
//	go test ./bench -run '^$' -bench 'Call$' -benchtime 2000x
func BenchmarkCall(b *testing.B) {
	env, _ := newEnv(b, 1, *quietFlag)
	ctx := context.Background()
	page := domain.Page{First: 5}
	if c, err := env.Store.CommentsOf(ctx, env.Fixture.TaskID, page); err != nil || len(c.Items) != 5 {
		b.Fatalf("CommentsOf = %v, %v; want a page of 5 comments", c, err)
	}
	calls0, cpu0 := env.Calls.Snapshot(), selfCPU()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if _, err := env.Store.CommentsOf(ctx, env.Fixture.TaskID, page); err != nil {
			b.Fatal(err)
		}
		n++
	}
	cpu := selfCPU() - cpu0
	if calls := env.Calls.Snapshot().Sub(calls0); calls.Total() != n {
		b.Fatalf("%d calls for %d pages, want one each", calls.Total(), n)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "server-cpu-us/call")
}

// BenchmarkDispatch compares the server CPU per operation of the loaders'
// dispatch by level (production: graph/dispatch counts each field's start
// and end and flushes a level's batches when its last field has asked)
// with the 1 ms batch window it replaced (loaders.Config.Wait), the two
// alternating per operation on one dataset, one request after another.
// Its calls/op show the window's splits on a busy machine.
//
//	go test ./bench -run '^$' -bench Dispatch -benchtime 40x -count 3
func BenchmarkDispatch(b *testing.B) {
	env, _ := newEnv(b, 1, *quietFlag)
	ctx := context.Background()
	modes := []struct {
		name string
		m    Mode
	}{{"levels", Batched}, {"window", Windowed}}
	for _, op := range Suite() {
		for _, md := range modes {
			h := env.Handler(md.m)
			b.Run(op.Name+"/"+md.name, func(b *testing.B) {
				body := op.Body(env.Fixture)
				var w Recorder
				calls0, cpu0 := env.Calls.Snapshot(), selfCPU()
				n := 0
				for b.Loop() {
					if err := env.Do(ctx, h, body, &w); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.ReportMetric(float64((selfCPU()-cpu0).Microseconds())/float64(n), "server-cpu-us/op")
				b.ReportMetric(float64(env.Calls.Snapshot().Sub(calls0).Total())/float64(n), "calls/op")
			})
		}
	}
}
