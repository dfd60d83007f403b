package dynamo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/dynamo/embedded"
	"github.com/taskgraph/taskgraph/dynamo/embedded/engine"
)

// DataFile keeps the table of an embedded store in a file (a dump, see
// ReadDump) across restarts. Save writes a whole new file beside the old one,
// flushes it to disk and renames it over the old one, then flushes the
// directory: whenever the process stops, even by a crash or power loss, the
// file holds one complete snapshot, the last one saved.
//
// With Journal set, every write answered since that snapshot is in the
// journal beside it (embedded.Store.StartJournal): Load replays it over the
// snapshot, and Save cuts it once the next snapshot is safely written, so a
// crash of the process loses no answered write. Without a journal a crash
// loses the changes made since the last snapshot.
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
	// Journal, if not empty, is the prefix of the journal's files
	// (JournalPrefix(Path)); JournalSync makes each write wait for its
	// record to be flushed to disk (see embedded.Store.StartJournal).
	Journal     string
	JournalSync bool
	// Replayed is how many journal records Load applied over the snapshot.
	Replayed int
	// SnapshotRecords and SnapshotBytes are how far the journal grows
	// (records, or their bytes, that no snapshot holds) before Run takes a
	// snapshot; 0 is DefaultSnapshotRecords, DefaultSnapshotBytes. Without
	// a journal, Run saves at every tick that follows writes.
	SnapshotRecords int
	SnapshotBytes   int64

	mu    sync.Mutex
	saved uint64 // Embedded.Writes() at the last load or save
	dirty bool   // the table holds what no snapshot of this version has
	items int    // items in the file
	file  bool   // the file exists (loaded or saved)
	held  time.Duration
}

// LastHold is how long the last snapshot held writes back (Save): the
// time to wait for the writes in progress and take the table's view.
func (f *DataFile) LastHold() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held
}

// DefaultSnapshotRecords and DefaultSnapshotBytes are the journal's growth
// past which Run takes a snapshot: a start replays at most about that
// much, and a snapshot, whose cost grows with the table, is taken only
// once writes have added that much.
const (
	DefaultSnapshotRecords = 10_000
	DefaultSnapshotBytes   = 16 << 20
)

// JournalPrefix is the prefix of the journal files beside the data file
// path: task-manager.jsonl's are task-manager.journal.000001, ….
func JournalPrefix(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".journal"
}

// Load puts the file's items into the table, which should be new and empty,
// and returns how many there were; found is false when there is no file
// and no journal yet. A file that cannot be read whole, or whose items do
// not match its checksum, is an error naming the file: the store never
// starts empty in its place. Leftovers of saves cut short by a crash are
// removed. With Journal, the journal's records are then replayed over the
// snapshot and a new journal file is started: a torn last record (a crash
// in the middle of its append) is dropped with a warning in the store's
// log naming the file its bytes are kept in; any other damage is an error
// naming the file and the offset (embedded.Store.Replay).
func (f *DataFile) Load(ctx context.Context) (items int, found bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tmps, _ := filepath.Glob(f.Path + ".*.tmp"); len(tmps) > 0 {
		for _, t := range tmps {
			_ = os.Remove(t)
		}
	}
	b, err := os.ReadFile(f.Path)
	found = err == nil
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return 0, false, err
	}
	// A snapshot of this version is loaded as it is, straight into the
	// engine; anything else (a data file of an older version, or none) is
	// written through the store, counted and indexed afresh, and the next
	// snapshot (at the first tick of Run) is of this version.
	lines, whole := snapshotLines(b)
	if err := f.Store.forgetBackfills(ctx); err != nil { // the data's own markers say
		return 0, found, err
	}
	if whole {
		if err := f.Embedded.LoadItems(f.Store.Table(), lines); err != nil {
			var le *engine.LoadError
			if errors.As(err, &le) {
				return 0, true, fmt.Errorf("the data file %s is damaged: line %d: %v", f.Path, le.N+1, le.Err)
			}
			return 0, true, fmt.Errorf("loading the data file %s: %w", f.Path, err)
		}
		if err := f.Store.DetectTagIndex(ctx); err != nil {
			return 0, true, err
		}
		if err := f.Store.DetectChangeLog(ctx); err != nil {
			return 0, true, err
		}
		f.items = len(lines)
	} else {
		var its []Item
		if found {
			if its, err = ReadDump(bytes.NewReader(b)); err != nil {
				return 0, true, fmt.Errorf("the data file %s is damaged: %w", f.Path, err)
			}
		}
		if err := f.Store.PutItems(ctx, its); err != nil {
			return 0, true, fmt.Errorf("loading the data file %s: %w", f.Path, err)
		}
		f.items = len(its)
		f.dirty = found // a snapshot of this version replaces it at Run's first tick
	}
	f.saved, f.file = f.Embedded.Writes(), found
	if f.Journal == "" {
		return f.items, found, f.Store.RunBackfills(ctx)
	}
	journals, _, err := embedded.JournalFiles(f.Journal)
	if err != nil {
		return 0, found, fmt.Errorf("the journal %s: %w", f.Journal, err)
	}
	f.Replayed, err = f.Embedded.Replay(f.Journal, func(path, kept string, err error) {
		f.Store.Log.Warn("the journal ends in a torn record (a crash while it was written, or damage to its last record): "+
			"dropped, its bytes kept aside; the writes before it are kept",
			"file", path, "kept", kept, "err", err)
	})
	if err != nil {
		return 0, true, fmt.Errorf("replaying the journal: %w (the start is refused rather than lose the writes after the damage: "+
			"restore the file, or move %s.* away to start from the snapshot alone)", err, f.Journal)
	}
	f.dirty = f.dirty || f.Replayed > 0 // the next Save snapshots them, then drops the old files
	if err := f.Embedded.StartJournal(f.Journal, f.JournalSync, f.Store.Log); err != nil {
		return 0, true, err
	}
	if f.Replayed > 0 {
		if !whole {
			// The journal's records hold whole items as a write left
			// them; a version without counters wrote them without:
			// count afresh. (After a snapshot of this version, this
			// version wrote them.)
			if _, err := f.Store.Recount(ctx); err != nil {
				return 0, true, fmt.Errorf("counting the tasks and comments after the journal: %w", err)
			}
		}
		if f.items, err = f.Embedded.ItemCount(f.Store.Table()); err != nil {
			return 0, true, fmt.Errorf("counting the items after the journal: %w", err)
		}
	}
	if err := f.Store.RunBackfills(ctx); err != nil { // those the data has not had
		return 0, true, err
	}
	return f.items, found || len(journals) > 0, nil
}

// snapshotLines returns the items of b, a data file, when it is a whole
// snapshot of this version (snapshotVersion): every line but the last an
// item line as Save writes it ({"Item":…}), the last line their count and
// checksum, matching. The items are the JSON of each (slices of b). When
// b is anything else, whole is false, and ReadDump reads it (and says
// what is wrong with it).
func snapshotLines(b []byte) (items [][]byte, whole bool) {
	b = bytes.TrimSuffix(b, []byte("\n"))
	last := bytes.LastIndexByte(b, '\n')
	var tail struct {
		Count    *int
		Version  *int
		Checksum *string
	}
	if err := json.Unmarshal(b[last+1:], &tail); err != nil || tail.Version == nil || *tail.Version != snapshotVersion ||
		tail.Count == nil || *tail.Count < 0 || tail.Checksum == nil {
		return nil, false
	}
	var sum uint32
	if last >= 0 {
		items = make([][]byte, 0, *tail.Count)
		for line := range bytes.SplitSeq(b[:last], []byte("\n")) {
			item, ok := bytes.CutPrefix(line, []byte(snapshotItemPrefix))
			if !ok || len(item) < 2 || item[len(item)-1] != '}' {
				return nil, false
			}
			sum += crc32.Checksum(line, castagnoli)
			items = append(items, item[:len(item)-1])
		}
	}
	if len(items) != *tail.Count || checkCountLine(b[last+1:], tail.Version, tail.Checksum, sum) != nil {
		return nil, false
	}
	return items, true
}
