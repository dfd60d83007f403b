package bench

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Samples are the results of `go test -bench` runs of BenchmarkSuite: for
// each benchmark (e.g. "batching=on/dashboard"), each metric's values (e.g.
// "server-cpu-ms/op"), one per run.
type Samples map[string]map[string][]float64

// ParseBench adds the BenchmarkSuite result lines read from r to s (made if
// nil) and returns it. Other lines are skipped.
func ParseBench(s Samples, r io.Reader) (Samples, error) {
	if s == nil {
		s = Samples{}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkSuite/") {
			continue
		}
		name := strings.TrimPrefix(f[0], "BenchmarkSuite/")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // the -GOMAXPROCS suffix
			}
		}
		if s[name] == nil {
			s[name] = map[string][]float64{}
		}
		// f[1] is the iteration count; then value-unit pairs.
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return s, fmt.Errorf("benchmark line %q: %w", sc.Text(), err)
			}
			s[name][f[i+1]] = append(s[name][f[i+1]], v)
		}
	}
	return s, sc.Err()
}

// medianRange returns the median, minimum and maximum of v.
func medianRange(v []float64) (med, lo, hi float64, ok bool) {
	if len(v) == 0 {
		return 0, 0, 0, false
	}
	v = slices.Sorted(slices.Values(v))
	med = v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return med, v[0], v[len(v)-1], true
}

// CPUTable renders before and after side by side, as Markdown: for each
// benchmark (in Suite order, batching on then off), the median server CPU
// ms/op with its range over the runs, allocs/op, KB/op and goroutines/op,
// each before → after, and the CPU ratio.
func CPUTable(before, after Samples) string {
	var b strings.Builder
	b.WriteString("| operation | batching | runs | server CPU ms/op | ÷ | allocs/op | KB/op | goroutines/op |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|\n")
	cell := func(s Samples, name, metric string, scale float64, withRange bool) (string, float64) {
		med, lo, hi, ok := medianRange(s[name][metric])
		if !ok {
			return "–", 0
		}
		f := func(x float64) string { return num(x / scale) }
		if withRange && len(s[name][metric]) > 1 {
			return fmt.Sprintf("%s (%s–%s)", f(med), f(lo), f(hi)), med
		}
		return f(med), med
	}
	for _, mode := range []string{"on", "off"} {
		for _, op := range Suite() {
			name := "batching=" + mode + "/" + op.Name
			if before[name] == nil && after[name] == nil {
				continue
			}
			cpuB, vb := cell(before, name, "server-cpu-ms/op", 1, true)
			cpuA, va := cell(after, name, "server-cpu-ms/op", 1, true)
			quot := "–"
			if va > 0 && vb > 0 {
				quot = fmt.Sprintf("%.2f×", va/vb)
			}
			row := []string{op.Name, mode, fmt.Sprintf("%d / %d", len(before[name]["server-cpu-ms/op"]), len(after[name]["server-cpu-ms/op"])),
				cpuB + " → " + cpuA, quot}
			for _, m := range []struct {
				metric string
				scale  float64
			}{{"allocs/op", 1}, {"B/op", 1024}, {"goroutines/op", 1}} {
				x, _ := cell(before, name, m.metric, m.scale, false)
				y, _ := cell(after, name, m.metric, m.scale, false)
				row = append(row, x+" → "+y)
			}
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
	}
	return b.String()
}

// num formats a figure with three significant digits (at least integers).
func num(x float64) string {
	switch {
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}
