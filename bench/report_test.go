package bench

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/loaders"
)

// TestReport runs the full benchmark and prints the Markdown report
// (docs/performance-report.md quotes one). It takes minutes, so it runs only with
// -report:
//
//	go test ./bench -run '^TestReport$' -v -timeout 30m -report
func TestReport(t *testing.T) {
	if !*reportFlag {
		t.Skip("the benchmark report runs only with -report")
	}
	o := ReportOptions{Endpoint: *endpoint, StorePID: *storePID, Clients: *clients, Budget: *budget, MinOps: *minOps, MaxOps: *maxOps,
		Reps: *repsFlag, Quiet: *quietFlag, Modes: []Mode{Batched}, BaselineLoadScale: *baselineLoad, Logf: t.Logf}
	if *baseline {
		o.Modes = append(o.Modes, Unbatched)
	}
	if *wideFlag {
		o.CountOnly = append(o.CountOnly, Mode{Name: "batching on, 20 ms window", Loaders: loaders.Config{Wait: pinnedWait}})
	}
	for _, s := range strings.Split(*scalesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			t.Fatalf("-scales: %q is not a list of positive numbers", *scalesFlag)
		}
		o.Scales = append(o.Scales, n)
	}
	if *opsFlag != "" {
		re, err := regexp.Compile(*opsFlag)
		if err != nil {
			t.Fatalf("-ops: %v", err)
		}
		o.Ops = re
	}
	rep, err := RunReport(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	md := rep.Markdown()
	fmt.Printf("\n-----8<----- report -----8<-----\n%s-----8<----- end -----8<-----\n", md)
	if *outFlag != "" {
		if err := os.WriteFile(*outFlag, []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
