package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Latency is the DynamoDB round-trip time the modelled latency assumes.
const Latency = 5 * time.Millisecond

// ReportOptions configure RunReport.
type ReportOptions struct {
	// Endpoint is a DynamoDB endpoint; empty runs the embedded store in a
	// child process (StartStoreProcess) for each scale.
	Endpoint string
	// StorePID is the process id of the store at Endpoint, when it runs on
	// this machine, to read its CPU time from /proc; 0 if unknown.
	StorePID int
	// Scales are the dataset scales, e.g. 1, 2, 4.
	Scales []int
	// Clients is the load runs' concurrency.
	Clients int
	// Budget is how long a load run keeps starting operations, once it
	// has started at least MinOps/scale of them, and at most MaxOps. An
	// operation so slow alone that MinOps/scale of them in a row would take
	// longer than Budget runs exactly MinOps/scale times, all at once: on
	// the embedded store the dashboard at 4× takes seconds alone.
	Budget         time.Duration
	MinOps, MaxOps int
	// Reps is the number of gated runs per operation that count calls and
	// round trips: in the first mode at every scale, in the others at 1×
	// (one run above).
	Reps int
	// Quiet is the gate's quiet window.
	Quiet time.Duration
	// Ops selects operations by name; nil runs the whole suite.
	Ops *regexp.Regexp
	// Modes are the loader configurations to measure; the first is the
	// one under test, the others are baselines.
	Modes []Mode
	// CountOnly are further loader configurations whose calls and round
	// trips are counted (no load runs), e.g. a wide batch window that makes
	// every level one batch.
	CountOnly []Mode
	// BaselineLoadScale is the largest scale at which baselines get load
	// runs too (0: every scale); above it they get gated counts only.
	BaselineLoadScale int
	// Logf reports progress.
	Logf func(format string, args ...any)
}

// Report is the outcome of RunReport.
type Report struct {
	Options    ReportOptions
	Start      time.Time
	Took       time.Duration
	LoadBefore string // /proc/loadavg at the start
	LoadAfter  string
	// Driver is the load driver's own cost (DriverCost with the dashboard's
	// request and answer).
	Driver LoadResult
	Scales []ScaleResult
}

// ScaleResult holds one scale's measurements.
type ScaleResult struct {
	Scale    int
	Fixture  *Fixture
	SeedTook time.Duration
	Store    string // what served the table
	Modes    []ModeResult
}

// ModeResult holds one loader configuration's measurements at one scale.
type ModeResult struct {
	Mode Mode
	// CountOnly: calls and round trips only, not compared with the first.
	CountOnly bool
	Ops       []OpResult
}

// OpResult holds one operation's measurements.
type OpResult struct {
	Op      Op
	Objects int
	// Alone is the time of one run with nothing else going on (gate off).
	Alone time.Duration
	// Counts are the gated runs' counts.
	Counts []Count
	Load   LoadResult
	// LoadErr is why the load run failed, if it did.
	LoadErr string
}

// RoundTrips returns the median, minimum and maximum round trips of the
// gated runs.
func (r OpResult) RoundTrips() (med, lo, hi int) {
	return stats(r.Counts, func(c Count) int { return c.RoundTrips })
}

// CallsOf returns the median, minimum and maximum calls of one operation
// name ("" for all) of the gated runs.
func (r OpResult) CallsOf(name string) (med, lo, hi int) {
	return stats(r.Counts, func(c Count) int {
		if name == "" {
			return c.Calls.Total()
		}
		return c.Calls[name]
	})
}

func stats(cs []Count, f func(Count) int) (med, lo, hi int) {
	if len(cs) == 0 {
		return 0, 0, 0
	}
	v := make([]int, len(cs))
	for i, c := range cs {
		v[i] = f(c)
	}
	slices.Sort(v)
	return v[len(v)/2], v[0], v[len(v)-1]
}

// Modelled returns the modelled latency: round trips × (Latency + the
// mode's batch window) + server CPU per operation.
func (r OpResult) Modelled(m Mode) time.Duration {
	rt, _, _ := r.RoundTrips()
	return time.Duration(rt)*(Latency+m.BatchWait()) + r.Load.CPUPerOp()
}

// RunReport seeds each scale, runs the suite in each mode and measures.
func RunReport(ctx context.Context, o ReportOptions) (*Report, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	rep := &Report{Options: o, Start: time.Now(), LoadBefore: loadavg()}
	runID := strconv.FormatInt(time.Now().Unix()%1e6, 36)
	for _, scale := range o.Scales {
		sr, err := runScale(ctx, o, scale, fmt.Sprintf("taskgraph-bench-%s-x%d", runID, scale), logf, rep)
		if err != nil {
			return rep, err
		}
		rep.Scales = append(rep.Scales, *sr)
	}
	rep.Took, rep.LoadAfter = time.Since(rep.Start), loadavg()
	return rep, nil
}

func runScale(ctx context.Context, o ReportOptions, scale int, table string, logf func(string, ...any), rep *Report) (*ScaleResult, error) {
	sr := &ScaleResult{Scale: scale, Store: o.Endpoint}
	endpoint := o.Endpoint
	var storeCPU func() (time.Duration, bool)
	if o.StorePID > 0 {
		storeCPU = func() (time.Duration, bool) { return processCPU(o.StorePID) }
		sr.Store += fmt.Sprintf(" (process %d)", o.StorePID)
	}
	if endpoint == "" {
		p, err := StartStoreProcess(ctx)
		if err != nil {
			return nil, err
		}
		defer p.Stop()
		endpoint, storeCPU = p.Endpoint, p.CPU
		sr.Store = fmt.Sprintf("the embedded store, child process %d", p.PID())
	}
	env, err := Open(ctx, endpoint, table, o.Quiet)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	if o.Endpoint != "" {
		defer func() { _ = env.DropTable(context.WithoutCancel(ctx)) }()
	}
	start := time.Now()
	if err := env.Seed(ctx, scale); err != nil {
		return nil, err
	}
	sr.Fixture, sr.SeedTook = env.Fixture, time.Since(start)
	logf("%v, seeded in %v", sr.Fixture, sr.SeedTook.Round(time.Millisecond))
	lo := LoadOptions{Clients: o.Clients, Duration: o.Budget, MinOps: max(1, o.MinOps/scale), MaxOps: o.MaxOps, StoreCPU: storeCPU}
	for i, m := range slices.Concat(o.Modes, o.CountOnly) {
		h := env.Handler(m)
		countOnly := i >= len(o.Modes)
		load := !countOnly && (i == 0 || o.BaselineLoadScale == 0 || scale <= o.BaselineLoadScale)
		reps := o.Reps
		if i > 0 && scale > 1 {
			reps = 1
		}
		mr := ModeResult{Mode: m, CountOnly: countOnly}
		for _, op := range Suite() {
			if o.Ops != nil && !o.Ops.MatchString(op.Name) {
				continue
			}
			r := OpResult{Op: op}
			t0 := time.Now()
			answer, n, err := env.Check(ctx, h, op)
			if err != nil {
				return nil, fmt.Errorf("%d× %s: %w", scale, m.Name, err)
			}
			r.Alone, r.Objects = time.Since(t0), n
			if op.Name == "dashboard" && rep.Driver.Ops == 0 {
				if rep.Driver, err = DriverCost(ctx, op.Body(env.Fixture), answer,
					LoadOptions{Clients: o.Clients, Duration: time.Second, MinOps: 1000, MaxOps: 5000}); err != nil {
					return nil, err
				}
			}
			for range reps {
				c, err := env.Count(ctx, h, op)
				if err != nil {
					return nil, fmt.Errorf("%d× %s: %w", scale, m.Name, err)
				}
				r.Counts = append(r.Counts, c)
			}
			if load {
				run := lo
				if r.Alone > 0 && int(o.Budget/r.Alone) < run.MinOps {
					// Even MinOps one after the other overrun the budget: run
					// exactly MinOps (a concurrency of at most MinOps).
					run.MaxOps = run.MinOps
				}
				if r.Load, err = env.Load(ctx, h, op, run); err != nil {
					// A failure under load is a result too (e.g. a store that
					// refuses thousands of connections at once).
					r.Load, r.LoadErr = LoadResult{}, clip(err.Error(), 160)
					logf("%d× %s, %s: FAILED under load: %v", scale, m.Name, op.Name, clip(err.Error(), 600))
				}
			}
			rt, rtLo, rtHi := r.RoundTrips()
			line := fmt.Sprintf("%d× %s, %s: calls %v, round trips %d (%d–%d) %v; alone %v", scale, m.Name, op.Name,
				r.median().Calls, rt, rtLo, rtHi, r.median().Rounds, r.Alone.Round(time.Microsecond))
			if r.Load.Ops > 0 {
				line += fmt.Sprintf("; %d ops from %d clients: %.1f ops/s, server CPU %v/op, p50 %v", r.Load.Ops, o.Clients,
					r.Load.OpsPerSec(), r.Load.CPUPerOp().Round(time.Microsecond), r.Load.Percentile(0.5).Round(time.Microsecond))
			}
			logf("%s", line)
			mr.Ops = append(mr.Ops, r)
		}
		sr.Modes = append(sr.Modes, mr)
	}
	return sr, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// median returns the gated run with the median number of round trips.
func (r OpResult) median() Count {
	cs := slices.Clone(r.Counts)
	slices.SortStableFunc(cs, func(a, b Count) int { return cmp.Compare(a.RoundTrips, b.RoundTrips) })
	return cs[len(cs)/2]
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
