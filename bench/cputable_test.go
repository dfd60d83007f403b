package bench

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var cpuTableFlag = flag.String("cputable", "", "TestCPUTable: two files of BenchmarkSuite output, before,after (scripts/benchcpu)")

// TestCPUTable prints CPUTable of two files of BenchmarkSuite output (the
// runs of scripts/benchcpu); it runs only with -cputable=before,after.
func TestCPUTable(t *testing.T) {
	if *cpuTableFlag == "" {
		t.Skip("runs only with -cputable=before,after")
	}
	files := strings.Split(*cpuTableFlag, ",")
	if len(files) != 2 {
		t.Fatalf("-cputable: want two files, before,after; got %q", *cpuTableFlag)
	}
	var s [2]Samples
	for i, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		s[i], err = ParseBench(nil, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("\n-----8<----- cpu -----8<-----\n%s-----8<----- end -----8<-----\n", CPUTable(s[0], s[1]))
}

func TestParseBenchAndCPUTable(t *testing.T) {
	out := `goos: linux
BenchmarkSuite/batching=on/dashboard-2         	       2	2820000000 ns/op	         3.000 BatchGetItem/op	         0 GetItem/op	       155.0 Query/op	       158.0 calls/op	      1160 goroutines/op	         3.000 roundtrips/op	        96.50 server-cpu-ms/op	11000000 B/op	  179000 allocs/op
BenchmarkSuite/batching=on/dashboard-2         	       2	2820000000 ns/op	        80.00 server-cpu-ms/op	         1000 goroutines/op	10000000 B/op	  170000 allocs/op
BenchmarkSuite/batching=on/dashboard-2         	       2	2820000000 ns/op	        90.00 server-cpu-ms/op
PASS
`
	before, err := ParseBench(nil, strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	cpu := before["batching=on/dashboard"]["server-cpu-ms/op"]
	if len(cpu) != 3 || cpu[0] != 96.5 || cpu[2] != 90 {
		t.Fatalf("server-cpu-ms/op samples = %v, want [96.5 80 90]", cpu)
	}
	after, err := ParseBench(nil, strings.NewReader("BenchmarkSuite/batching=on/dashboard-2 1 5 ns/op 30.00 server-cpu-ms/op 4096 B/op 50000 allocs/op 300 goroutines/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := CPUTable(before, after)
	want := "| dashboard | on | 3 / 1 | 90.0 (80.0–96.5) → 30.0 | 0.33× | 174500 → 50000 | 10254 → 4.00 | 1080 → 300 |"
	if !strings.Contains(got, want) {
		t.Errorf("CPUTable =\n%s\nwant a row\n%s", got, want)
	}
	if strings.Contains(got, "profile") {
		t.Errorf("CPUTable has a row for an operation without samples:\n%s", got)
	}
	if _, err := ParseBench(nil, strings.NewReader("BenchmarkSuite/batching=on/x-2 1 zz ns/op\n")); err == nil {
		t.Error("ParseBench took a value that is not a number")
	}
}
