package bench

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/graph/loaders"
)

// The report as Markdown: how it was run, then per scale each mode's
// DynamoDB calls and round trips, its time and memory under load, each
// baseline's ratios to the first mode, and how each figure grows with the
// scale.

// printf writes to the report.
type printf = func(format string, args ...any)

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	r.writeHeader(p)
	for _, s := range r.Scales {
		p("## %d×: %d items\n\n%s; seeded in %v; the store: %s\n\n", s.Scale, s.Fixture.Items(), s.Fixture, s.SeedTook.Round(time.Millisecond), s.Store)
		names := callNames(s)
		for _, m := range s.Modes {
			writeCalls(p, s, m, names)
			if !m.loaded() {
				continue
			}
			writeLoad(p, s, m)
		}
		writeRatios(p, s)
	}
	if len(r.Scales) > 1 {
		r.writeScaling(p)
	}
	return b.String()
}

// writeHeader writes the report's title and how it was run.
func (r *Report) writeHeader(p printf) {
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
		o.Quiet, Latency, loaders.DefaultBatchWait)
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
}

// writeCalls writes a mode's DynamoDB calls by operation, round trips and
// modelled latency at one scale.
func writeCalls(p printf, s ScaleResult, m ModeResult, names []string) {
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
}

// writeLoad writes a mode's time and memory under load at one scale.
func writeLoad(p printf, s ScaleResult, m ModeResult) {
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

// writeRatios writes each baseline's figures over the first mode's at one
// scale (count-only modes apart).
func writeRatios(p printf, s ScaleResult) {
	if len(s.Modes) < 2 {
		return
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

// writeScaling writes each mode's figures side by side across the scales.
func (r *Report) writeScaling(p printf) {
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
