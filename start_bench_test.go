//go:build unix

package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/bench"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
	"github.com/taskgraph/taskgraph/internal/wire"
)

var startItems = flag.Int("start.items", 100_000, "items in the data file of BenchmarkStartFromDataDir")

// BenchmarkStartFromDataDir times a start of the embedded store from a
// data directory holding the benchmark's dataset of -start.items items
// (the server's own openStore: the snapshot read, its items written to the
// store, the journal started), and reports the CPU it took, the heap the
// loaded table takes per item, and the time and CPU of one snapshot of the
// table (DataFile.Save) after a write:
//
//	go test . -run '^$' -bench StartFromDataDir -benchtime 3x -args -start.items 100000
func BenchmarkStartFromDataDir(b *testing.B) {
	wire.TuneGC(os.Getenv) // as main does
	ctx := context.Background()
	dir := b.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	items := writeDataFile(b, ctx, filepath.Join(dir, "task-manager.jsonl"), *startItems)

	s := settings{store: "embedded", table: "task-manager", dataDir: dir, createTable: true, journalSync: "commit"}
	var before, after runtime.MemStats
	var cpu, save, saveCPU time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		c0 := processCPU()
		store, data, _, closeStore, err := openStore(ctx, s, log)
		if err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - c0
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		// One write, then a snapshot of the whole table, as the server
		// takes one every saveEvery while writes come.
		if _, err := store.UpdateProfile(ctx, "snapshot-bench", domain.ProfileInput{Name: "Snapshot"}); err != nil {
			b.Fatal(err)
		}
		t0, c1 := time.Now(), processCPU()
		if _, err := data.Save(ctx); err != nil {
			b.Fatal(err)
		}
		save += time.Since(t0)
		saveCPU += processCPU() - c1
		closeStore()
		files, _ := filepath.Glob(filepath.Join(dir, "task-manager.journal.*"))
		for _, f := range files {
			_ = os.Remove(f)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(items), "items")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(save.Seconds()/float64(b.N), "snapshot-s")
	b.ReportMetric(saveCPU.Seconds()/float64(b.N), "snapshot-cpu-s")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(items), "heap-bytes/item")
}

// processCPU is the process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeDataFile writes a data file of the benchmark's dataset, at the
// first scale with at least n items, and returns its number of items.
func writeDataFile(b *testing.B, ctx context.Context, path string, n int) int {
	b.Helper()
	emb, err := embedded.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer emb.Close()
	store := wire.NewStore(emb.Client(client.Options()...), "task-manager", slog.New(slog.DiscardHandler), nil)
	if _, err := store.EnsureTable(ctx); err != nil {
		b.Fatal(err)
	}
	_, f := bench.BuildDataset(store, 1)
	scale := (n + f.Items() - 1) / f.Items()
	if _, err := bench.Seed(ctx, store, scale); err != nil {
		b.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	items, err := store.Export(ctx, out)
	if err != nil {
		b.Fatal(err)
	}
	return items
}
