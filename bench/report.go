package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/graph"
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

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	o := r.Options
	store := "the embedded store in a child process, one per scale"
	if o.Endpoint != "" {
		store = "the DynamoDB endpoint " + o.Endpoint
	}
	p("# taskgraph benchmark report\n\n")
	p("- run: %s, took %v; %s/%s, %d CPUs (GOMAXPROCS %d), %s\n", r.Start.UTC().Format(time.RFC3339), r.Took.Round(time.Second),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	p("- load average (1, 5, 15 min) at start: %s; at end: %s\n", r.LoadBefore, r.LoadAfter)
	p("- store: %s\n", store)
	p("- gate quiet window %v; modelled latency = round trips × (%v + batch window) + server CPU/op; batch window %v with batching on, 0 off\n",
		o.Quiet, Latency, graph.DefaultBatchWait)
	p("- load runs: %d clients; each starts operations for %v and at least %d/scale of them (at most %d); an operation slower alone than %v ÷ (%d/scale) runs exactly %d/scale times, all at once (so its concurrency is %d/scale)",
		o.Clients, o.Budget, o.MinOps, o.MaxOps, o.Budget, o.MinOps, o.MinOps, o.MinOps)
	if len(o.Modes) > 1 && o.BaselineLoadScale > 0 {
		p("; baselines only up to %d×", o.BaselineLoadScale)
	}
	p("\n- gated runs per operation (calls, round trips): %d (batching on at every scale, other modes at 1×; 1 otherwise); a range (min–max) where they differed, else the median\n", o.Reps)
	if r.Driver.Ops > 0 {
		p("- load driver alone (in-process requests of the dashboard, canned answer): %s ms CPU/op, %.0f allocs/op; included in the server CPU and allocs figures below\n",
			ms(r.Driver.CPUPerOp()), r.Driver.AllocsPerOp())
	}
	p("\n")
	for _, s := range r.Scales {
		p("## %d×: %d items\n\n%s; seeded in %v; the store: %s\n\n", s.Scale, s.Fixture.Items(), s.Fixture, s.SeedTook.Round(time.Millisecond), s.Store)
		names := callNames(s)
		for _, m := range s.Modes {
			p("### %s, %d×: DynamoDB\n\n| operation | objects |", m.Mode.Name, s.Scale)
			for _, n := range names {
				p(" %s |", n)
			}
			p(" calls | round trips | calls per round trip (median run) | modelled ms |\n|---|--:|%s--:|--:|---|--:|\n", strings.Repeat("--:|", len(names)))
			for _, op := range m.Ops {
				p("| %s | %d |", op.Op.Name, op.Objects)
				for _, n := range names {
					p(" %s |", rng(op.CallsOf(n)))
				}
				p(" %s | %s | %s | %s |\n", rng(op.CallsOf("")), rng(op.RoundTrips()), ints(op.median().Rounds), op.modelled(m.Mode))
			}
			p("\n")
			if !m.loaded() {
				continue
			}
			p("### %s, %d×: time and memory\n\n", m.Mode.Name, s.Scale)
			p("| operation | server CPU ms/op | store CPU ms/op | alone ms | p50 ms | p99 ms | ops/s | ops | allocs/op | KB/op | goroutines/op | heap MB start → end | goroutines start → end | calls/op under load |\n")
			p("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
			for _, op := range m.Ops {
				l := op.Load
				if op.LoadErr != "" {
					p("| %s | failed: %s | – | %s | – | – | – | – | – | – | – | – | – | – |\n", op.Op.Name, strings.ReplaceAll(op.LoadErr, "|", "/"), ms(op.Alone))
					continue
				}
				p("| %s | %s | %s | %s | %s | %s | %.1f | %d | %.0f | %.0f | %.0f | %.1f → %.1f | %d → %d | %.1f |\n", op.Op.Name, op.cpu(), op.storeCPU(), ms(op.Alone),
					ms(l.Percentile(0.5)), ms(l.Percentile(0.99)), l.OpsPerSec(), l.Ops, l.AllocsPerOp(), l.BytesPerOp()/1024, l.GoroutinesPerOp(),
					mb(l.HeapStart), mb(l.HeapEnd), l.GoroutinesStart, l.GoroutinesEnd, float64(l.Calls.Total())/float64(max(l.Ops, 1)))
			}
			p("\n")
		}
		if len(s.Modes) < 2 {
			continue
		}
		on := s.Modes[0]
		for _, off := range s.Modes[1:] {
			if off.CountOnly {
				continue
			}
			p("### %s ÷ %s, %d×\n\n", off.Mode.Name, on.Mode.Name, s.Scale)
			p("| operation | calls | round trips | server CPU ms/op | allocs/op | modelled ms |\n|---|--:|--:|--:|--:|--:|\n")
			for i, a := range on.Ops {
				z := off.Ops[i]
				ca, _, _ := a.CallsOf("")
				cz, _, _ := z.CallsOf("")
				ra, _, _ := a.RoundTrips()
				rz, _, _ := z.RoundTrips()
				p("| %s | %d / %d = %s | %d / %d = %s |", a.Op.Name, cz, ca, ratio(float64(cz), float64(ca)), rz, ra, ratio(float64(rz), float64(ra)))
				if a.Load.Ops == 0 || z.Load.Ops == 0 {
					p(" – | – | – |\n")
					continue
				}
				p(" %s / %s = %s | %.0f / %.0f = %s | %s / %s = %s |\n",
					z.cpu(), a.cpu(), ratio(float64(z.Load.CPUPerOp()), float64(a.Load.CPUPerOp())),
					z.Load.AllocsPerOp(), a.Load.AllocsPerOp(), ratio(z.Load.AllocsPerOp(), a.Load.AllocsPerOp()),
					z.modelled(off.Mode), a.modelled(on.Mode), ratio(float64(z.Modelled(off.Mode)), float64(a.Modelled(on.Mode))))
			}
			p("\n")
		}
	}
	if len(r.Scales) > 1 {
		p("## Scaling: %s\n\n", r.scaleHeader())
		for _, m := range r.Scales[0].Modes {
			cols := []struct {
				name string
				val  func(OpResult) string
			}{
				{"calls", func(x OpResult) string { return rng(x.CallsOf("")) }},
				{"round trips", func(x OpResult) string { return rng(x.RoundTrips()) }},
				{"server CPU ms/op", OpResult.cpu},
				{"store CPU ms/op", OpResult.storeCPU},
				{"ops/s", func(x OpResult) string {
					if x.Load.Ops == 0 {
						return "–"
					}
					return fmt.Sprintf("%.1f", x.Load.OpsPerSec())
				}},
			}
			p("### %s\n\n| operation |", m.Mode.Name)
			for _, c := range cols {
				p(" %s %s |", c.name, r.scaleHeader())
			}
			p("\n|---|%s\n", strings.Repeat("--:|", len(cols)))
			for i, op := range m.Ops {
				p("| %s |", op.Op.Name)
				for _, c := range cols {
					var vals []string
					for _, s := range r.Scales {
						if sm := s.mode(m.Mode.Name); sm != nil && i < len(sm.Ops) {
							vals = append(vals, c.val(sm.Ops[i]))
						}
					}
					p(" %s |", strings.Join(vals, " / "))
				}
				p("\n")
			}
			p("\n")
		}
	}
	return b.String()
}

// median returns the gated run with the median number of round trips.
func (r OpResult) median() Count {
	cs := slices.Clone(r.Counts)
	slices.SortStableFunc(cs, func(a, b Count) int { return cmp.Compare(a.RoundTrips, b.RoundTrips) })
	return cs[len(cs)/2]
}

func (r OpResult) cpu() string {
	if r.Load.Ops == 0 {
		return "–"
	}
	return ms(r.Load.CPUPerOp())
}

func (r OpResult) storeCPU() string {
	if d, ok := r.Load.StoreCPUPerOp(); ok && r.Load.Ops > 0 {
		return ms(d)
	}
	return "–"
}

func (r OpResult) modelled(m Mode) string {
	if r.Load.Ops == 0 {
		return "–"
	}
	return ms(r.Modelled(m))
}

func (m ModeResult) loaded() bool {
	for _, op := range m.Ops {
		if op.Load.Ops > 0 || op.LoadErr != "" {
			return true
		}
	}
	return false
}

func (r *Report) scaleHeader() string {
	var s []string
	for _, x := range r.Scales {
		s = append(s, fmt.Sprintf("%d×", x.Scale))
	}
	return strings.Join(s, "/")
}

func (s *ScaleResult) mode(name string) *ModeResult {
	for i := range s.Modes {
		if s.Modes[i].Mode.Name == name {
			return &s.Modes[i]
		}
	}
	return nil
}

// callNames lists the DynamoDB operations seen at a scale, in a fixed order.
func callNames(s ScaleResult) []string {
	seen := map[string]bool{}
	for _, m := range s.Modes {
		for _, op := range m.Ops {
			for _, c := range op.Counts {
				for n := range c.Calls {
					seen[n] = true
				}
			}
		}
	}
	out := []string{"GetItem", "BatchGetItem", "Query"}
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range seen {
			if !yield(n) {
				return
			}
		}
	}) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func rng(med, lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(med)
	}
	return fmt.Sprintf("%d (%d–%d)", med, lo, hi)
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, "·")
}

func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	switch {
	case f >= 100:
		return fmt.Sprintf("%.0f", f)
	case f >= 10:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.2f", f)
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f×", a/b)
}
