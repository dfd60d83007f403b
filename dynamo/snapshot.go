package dynamo

import (
	"bufio"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/taskgraph/taskgraph/dynamo/embedded"
	"github.com/taskgraph/taskgraph/dynamo/embedded/engine"
)

// snapshotItemPrefix begins each item line of a snapshot.
const snapshotItemPrefix = `{"Item":`

// Save writes a snapshot of the table to the file if any write call reached
// the embedded store since the last load or save, and reports whether it
// did. Writes wait while the table is read (not while the file is written).
// While the store is read-only (its journal cannot be written) it does
// nothing: the snapshot and the journal on disk hold every answered write.
func (f *DataFile) Save(ctx context.Context) (saved bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ro, _, _ := f.Embedded.ReadOnly(); ro {
		return false, nil
	}
	t0 := time.Now()
	release := f.Embedded.HoldWrites()
	gen := f.Embedded.Writes()
	if gen == f.saved && !f.dirty {
		release()
		return false, nil
	}
	// The table at this point of the journal, in O(1): written to the file
	// while writes go on.
	view, err := f.Embedded.View(f.Store.Table())
	var drop func() error
	if err == nil { // the journal's older files hold what the snapshot holds, the new one what comes after
		f.Embedded.SnapshotStep(embedded.StepTableRead)
		drop, err = f.Embedded.CutJournal()
	}
	release()
	f.held = time.Since(t0)
	if err != nil {
		return false, fmt.Errorf("reading the table for %s: %w", f.Path, err)
	}
	n := view.Len()
	if err := writeFileAtomic(f.Path, func(w io.Writer) error { return writeSnapshot(w, view) }, f.Embedded.SnapshotStep); err != nil {
		return false, err
	}
	f.dirty, f.file = false, true
	if err := drop(); err != nil { // replayed again at the next start: harmless
		f.Store.Log.Warn("removing the journal's older files", "err", err)
	}
	if f.Grown != nil && f.Comfortable > 0 && f.items <= f.Comfortable && n > f.Comfortable {
		f.Grown(n)
	}
	f.saved, f.items = gen, n
	return true, nil
}

// writeSnapshot writes a view of the table as a snapshot (snapshotVersion):
// each item's line is the store's own JSON of it.
func writeSnapshot(w io.Writer, view *engine.View) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var sum uint32
	n := 0
	line := make([]byte, 0, 4096)
	for raw := range view.Items {
		line = append(append(append(line[:0], snapshotItemPrefix...), raw...), '}')
		sum += crc32.Checksum(line, castagnoli)
		_, _ = bw.Write(append(line, '\n'))
		n++
	}
	fmt.Fprintf(bw, "{\"Count\":%d,\"Version\":%d,\"Checksum\":%q}\n", n, snapshotVersion, checksumOf(snapshotVersion, sum))
	return bw.Flush()
}

// grown reports whether the journal has grown enough since the last
// snapshot for Run to take one: always without a journal.
func (f *DataFile) grown() bool {
	if f.Journal == "" {
		return true
	}
	records, size := f.Embedded.JournalGrowth()
	maxRecords, maxBytes := f.SnapshotRecords, f.SnapshotBytes
	if maxRecords <= 0 {
		maxRecords = DefaultSnapshotRecords
	}
	if maxBytes <= 0 {
		maxBytes = DefaultSnapshotBytes
	}
	return records >= maxRecords || size >= maxBytes
}

// failureReminder is how often Run logs a save failure again while it
// lasts.
const failureReminder = 10 * time.Minute

// Run saves every interval until ctx ends. A failure is logged to the
// store's log when it starts, then every failureReminder while saves keep
// failing (each at debug level), and the first save that works again says
// so. The caller saves
// once more after the last write.
func (f *DataFile) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var since, told time.Time
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.mu.Lock()
			// A snapshot when the journal has grown, or the table holds
			// what no snapshot of this version has, or at the first
			// writes to a new data file.
			due := f.dirty || f.grown() || !f.file && f.Embedded.Writes() != f.saved
			f.mu.Unlock()
			if !due {
				// Without a flush per write, a flush per tick bounds
				// what a power loss takes to the writes of one tick.
				if f.Journal != "" && !f.JournalSync {
					if err := f.Embedded.FlushJournal(); err != nil && ctx.Err() == nil {
						f.Store.Log.Warn("flushing the journal", "err", err)
					}
				}
				continue
			}
			_, err := f.Save(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				if failures == 0 {
					since = time.Now()
				}
				failures++
				if failures == 1 || time.Since(told) >= failureReminder {
					f.Store.Log.Error("saving the embedded store (the journal keeps every answered write meanwhile)",
						"err", err, "failures", failures, "since", since)
					told = time.Now()
				} else {
					f.Store.Log.Debug("saving the embedded store failed again", "err", err, "failures", failures)
				}
			case err == nil && failures > 0:
				f.Store.Log.Info("saving the embedded store works again", "failures", failures, "for", time.Since(since).Round(time.Second))
				failures = 0
			}
		}
	}
}

// WriteFileAtomic replaces path with data (WriteFileAtomicFunc).
func WriteFileAtomic(path string, data []byte) error {
	return WriteFileAtomicFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileAtomicFunc replaces path with what write writes so that a crash leaves either the
// old file or the new one, whole: a temporary file in the same directory,
// flushed, renamed over path, then the directory flushed. The file is
// readable by its owner only.
func WriteFileAtomicFunc(path string, write func(w io.Writer) error) error {
	return writeFileAtomic(path, write, func(string) {})
}

// writeFileAtomic is WriteFileAtomicFunc calling step after each of its
// steps (embedded.StepTempCreated, …).
func writeFileAtomic(path string, write func(w io.Writer) error, step func(string)) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp") // mode 0600
	if err != nil {
		return err
	}
	step(embedded.StepTempCreated)
	if err = write(tmp); err == nil {
		step(embedded.StepTempWritten)
		if err = tmp.Sync(); err == nil {
			step(embedded.StepTempFlushed)
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = os.Rename(tmp.Name(), path); err == nil {
			step(embedded.StepRenamed)
		}
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := embedded.SyncDir(dir); err != nil {
		return err
	}
	step(embedded.StepDirFlushed)
	return nil
}
