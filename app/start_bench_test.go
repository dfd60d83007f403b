//go:build unix

package app_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/bench"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
)

var (
	startItems   = flag.Int("start.items", 100_000, "items in the data file of BenchmarkStartFromDataDir")
	startJournal = flag.Int("start.journal", 10_000, "journal records replayed by BenchmarkStartFromDataDir's start with a journal")
)

// BenchmarkStartFromDataDir times a start of the embedded store from a
// data directory (the server's own app.OpenTable) holding a snapshot of
// -start.items items of the benchmark's dataset, and reports:
//
//   - cpu-s/op: the CPU of that start (the snapshot loaded into the engine);
//
//   - heap-bytes/item: the heap the loaded table takes, per item;
//
//   - replay-cpu-s: the CPU of a start from the snapshot and a journal of
//     -start.journal records (each a write through the API);
//
//   - snapshot-s, snapshot-cpu-s: the time and CPU of one snapshot of the
//     table (DataFile.Save) after a write, and snapshot-hold-s the time
//     writes waited for it;
//
//   - migrate-cpu-s: the CPU of the first start from a data file of the
//     version before snapshots of version 3 (a dump, counted and indexed
//     afresh), once.
//
//     go test ./app -run '^$' -bench StartFromDataDir -benchtime 3x -args -start.items 100000
func BenchmarkStartFromDataDir(b *testing.B) {
	app.TuneGC(os.Getenv) // as main does
	ctx := context.Background()
	dir := b.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	writeDataFile(b, ctx, filepath.Join(dir, "task-manager.jsonl"), *startItems)
	c := app.Config{StoreKind: "embedded", Table: "task-manager", DataDir: dir, CreateTable: true, JournalSync: "commit"}
	removeJournal := func() {
		files, _ := filepath.Glob(filepath.Join(dir, "task-manager.journal.*"))
		for _, f := range files {
			_ = os.Remove(f)
		}
	}

	// The first start from a dump of version 2, then its snapshot of this
	// version.
	c0 := processCPU()
	t, err := app.OpenTable(ctx, c, log)
	if err != nil {
		b.Fatal(err)
	}
	migrate := processCPU() - c0
	if _, err := t.Data.Save(ctx); err != nil {
		b.Fatal(err)
	}
	t.Close()
	removeJournal()
	items := countLines(b, filepath.Join(dir, "task-manager.jsonl")) - 1

	var before, after runtime.MemStats
	var cpu, replay, save, saveCPU, hold time.Duration
	var heap int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		c0 := processCPU()
		t, err := app.OpenTable(ctx, c, log)
		if err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - c0
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap += int64(after.HeapAlloc) - int64(before.HeapAlloc)
		// One write, then a snapshot of the whole table, with a write
		// waiting for the hold.
		if _, err := t.Store.UpdateProfile(ctx, "snapshot-bench", domain.ProfileInput{Name: "Snapshot"}); err != nil {
			b.Fatal(err)
		}
		t0, c1 := time.Now(), processCPU()
		if _, err := t.Data.Save(ctx); err != nil {
			b.Fatal(err)
		}
		save += time.Since(t0)
		saveCPU += processCPU() - c1
		hold += t.Data.LastHold()
		// A journal of -start.journal writes (not flushed one by one:
		// their number is what counts), replayed by the next start.
		t.Close()
		removeJournal()
		js := c
		js.JournalSync = "off"
		t, err = app.OpenTable(ctx, js, log)
		if err != nil {
			b.Fatal(err)
		}
		t.Data.SnapshotRecords = 1 << 30
		for i := range *startJournal {
			if _, err := t.Store.UpdateProfile(ctx, "journal-bench-"+strconv.Itoa(i%100), domain.ProfileInput{Name: "J" + strconv.Itoa(i)}); err != nil {
				b.Fatal(err)
			}
		}
		t.Close()
		c2 := processCPU()
		t, err = app.OpenTable(ctx, c, log)
		if err != nil {
			b.Fatal(err)
		}
		replay += processCPU() - c2
		if t.Data.Replayed < *startJournal {
			b.Fatalf("replayed %d records, want %d", t.Data.Replayed, *startJournal)
		}
		t.Close()
		removeJournal()
		b.StartTimer()
	}
	b.ReportMetric(float64(items), "items")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(heap)/float64(b.N)/float64(items), "heap-bytes/item")
	b.ReportMetric(replay.Seconds()/float64(b.N), "replay-cpu-s")
	b.ReportMetric(save.Seconds()/float64(b.N), "snapshot-s")
	b.ReportMetric(saveCPU.Seconds()/float64(b.N), "snapshot-cpu-s")
	b.ReportMetric(hold.Seconds()/float64(b.N), "snapshot-hold-s")
	b.ReportMetric(migrate.Seconds(), "migrate-cpu-s")
}

// processCPU is the process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeDataFile writes a data file of the benchmark's dataset, seeded at
// the first scale with at least n items, as a dump of version 2 (Export)
// of its first lines (by key) with their count and checksum: a data file
// of the version before snapshots of version 3.
func writeDataFile(b *testing.B, ctx context.Context, path string, n int) {
	b.Helper()
	emb, err := embedded.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer emb.Close()
	store := app.NewStore(emb.Client(client.Options()...), "task-manager", slog.New(slog.DiscardHandler), nil)
	if _, err := store.EnsureTable(ctx); err != nil {
		b.Fatal(err)
	}
	_, f := bench.BuildDataset(store, 1)
	scale := (n + f.Items() - 1) / f.Items()
	if _, err := bench.Seed(ctx, store, scale); err != nil {
		b.Fatal(err)
	}
	var dump bytes.Buffer
	if _, err := store.Export(ctx, &dump); err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(dump.Bytes()), []byte("\n"))
	lines = lines[:len(lines)-1]
	// The first start builds the tag indexes and the change log of these
	// items afresh: a tenth more lines make a table of about n items.
	n += n / 10
	if len(lines) < n {
		b.Fatalf("the dataset has %d items, fewer than %d", len(lines), n)
	}
	var out bytes.Buffer
	var sum uint32
	for _, l := range lines[:n] {
		sum += crc32.Checksum(l, crc32.MakeTable(crc32.Castagnoli))
		out.Write(append(l, '\n'))
	}
	fmt.Fprintf(&out, "{\"Count\":%d,\"Version\":2,\"Checksum\":\"%08x\"}\n", n, sum)
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
}

// countLines counts the lines of a file.
func countLines(b *testing.B, path string) int {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		n++
	}
	return n
}
