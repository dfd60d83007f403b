package dynamo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/dynamo/embedded"
)

// DataFile keeps the table of an embedded store in a file (a dump, see
// ReadDump) across restarts. Save writes a whole new file beside the old one,
// flushes it to disk and renames it over the old one, then flushes the
// directory: whenever the process stops, even by a crash or power loss, the
// file holds one complete snapshot, the last one saved. What a crash loses is
// the changes made since that snapshot.
type DataFile struct {
	// Path is the file.
	Path string
	// Store is a store on the embedded store's table.
	Store *Store
	// Embedded is the embedded store.
	Embedded *embedded.Store
	// Comfortable is the table size past which Save calls Grown, once per
	// crossing.
	Comfortable int
	// Grown, if set, is called when a save finds more items than
	// Comfortable and the previous one did not.
	Grown func(items int)

	mu    sync.Mutex
	saved uint64 // Embedded.Writes() at the last load or save
	items int    // items in the file
}

// Load puts the file's items into the table, which should be new and empty,
// and returns how many there were; found is false when there is no file
// yet. A file that cannot be read whole is an error naming the file: the
// store never starts empty in its place. Leftovers of saves cut short by a
// crash are removed.
func (f *DataFile) Load(ctx context.Context) (items int, found bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tmps, _ := filepath.Glob(f.Path + ".*.tmp"); len(tmps) > 0 {
		for _, t := range tmps {
			_ = os.Remove(t)
		}
	}
	r, err := os.Open(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		f.saved = f.Embedded.Writes()
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer r.Close()
	its, err := ReadDump(r)
	if err != nil {
		return 0, true, fmt.Errorf("the data file %s is damaged: %w", f.Path, err)
	}
	if err := f.Store.PutItems(ctx, its); err != nil {
		return 0, true, fmt.Errorf("loading the data file %s: %w", f.Path, err)
	}
	f.saved, f.items = f.Embedded.Writes(), len(its)
	return len(its), true, nil
}

// Save writes a snapshot of the table to the file if any write call reached
// the embedded store since the last load or save, and reports whether it
// did. Writes wait while the table is read (not while the file is written).
func (f *DataFile) Save(ctx context.Context) (saved bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var buf bytes.Buffer
	release := f.Embedded.HoldWrites()
	gen := f.Embedded.Writes()
	if gen == f.saved {
		release()
		return false, nil
	}
	n, err := f.Store.Export(ctx, &buf)
	release()
	if err != nil {
		return false, fmt.Errorf("reading the table for %s: %w", f.Path, err)
	}
	if err := WriteFileAtomic(f.Path, buf.Bytes()); err != nil {
		return false, err
	}
	if f.Grown != nil && f.Comfortable > 0 && f.items <= f.Comfortable && n > f.Comfortable {
		f.Grown(n)
	}
	f.saved, f.items = gen, n
	return true, nil
}

// Run saves every interval until ctx ends, logging failures to the store's
// log. The caller saves once more after the last write.
func (f *DataFile) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := f.Save(ctx); err != nil && ctx.Err() == nil {
				f.Store.Log.Error("saving the embedded store", "err", err)
			}
		}
	}
}

// WriteFileAtomic replaces path with data so that a crash leaves either the
// old file or the new one, whole: a temporary file in the same directory,
// flushed, renamed over path, then the directory flushed. The file is
// readable by its owner only.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp") // mode 0600
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if runtime.GOOS == "windows" { // directories cannot be flushed there
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("flushing %s: %w", dir, err)
	}
	return nil
}
