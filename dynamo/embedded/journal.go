package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// growth counts the journal's records (and their bytes) that no snapshot
// holds: replayed at start or appended since, until the next CutJournal.
type growth struct {
	mu      sync.Mutex
	records int
	bytes   int64
}

func (g *growth) add(records int, bytes int64) {
	g.mu.Lock()
	g.records += records
	g.bytes += bytes
	g.mu.Unlock()
}

func (g *growth) reset() {
	g.mu.Lock()
	g.records, g.bytes = 0, 0
	g.mu.Unlock()
}

// JournalGrowth returns how many records the journal holds that no
// snapshot does, and their bytes: those replayed at start and those
// written since, until the next CutJournal. A snapshot is worth taking
// once they are many (dynamo.DataFile.Run).
func (e *Store) JournalGrowth() (records int, bytes int64) {
	e.grown.mu.Lock()
	defer e.grown.mu.Unlock()
	return e.grown.records, e.grown.bytes
}

// journal is the open journal of a Store.
type journal struct {
	e      *Store
	prefix string
	sync   bool // flush to disk before a write is answered
	log    *slog.Logger

	mu      sync.Mutex // orders the writes and their appends
	seq     int        // the number of the file being written
	f       *os.File
	written int64 // bytes of f that are whole records: its size, unless an append failed
	keys    map[string][]string
	pending []*commit // with sync: records written, not yet flushed, oldest first
	closed  bool
	stop    chan struct{} // closed with the journal: ends the probes

	failed   error     // not nil: read-only since failedAt, for this reason
	failedAt time.Time // (the probes run while it is set)
	refused  int       // writes refused since

	syncMu sync.Mutex // one flush at a time; later writers wait and share it
	synced int64      // bytes of f known to be on disk
}

// commit is a record written and not yet flushed (with sync): its end in
// the file and the images to put back should the flush fail.
type commit struct {
	end    int64
	before []image
	done   bool  // flushed, or put back
	err    error // put back: why
}

// StartJournal journals every write from now on in a new file of prefix,
// numbered after the files there. With sync, a write is answered only once
// its record is flushed to disk (writes that wait together share a flush);
// without, once it is written to the file (a crash of the process loses
// nothing; a power loss, what the system had not written yet). log is
// where the journal says that it cannot write (and when it can again).
func (e *Store) StartJournal(prefix string, sync bool, log *slog.Logger) error {
	_, seqs, err := JournalFiles(prefix)
	if err != nil {
		return err
	}
	if log == nil {
		log = slog.Default()
	}
	j := &journal{e: e, prefix: prefix, sync: sync, log: log, keys: map[string][]string{}, stop: make(chan struct{})}
	if len(seqs) > 0 {
		j.seq = seqs[len(seqs)-1]
	}
	f, err := j.create(j.seq + 1)
	if err != nil {
		return err
	}
	j.seq, j.f = j.seq+1, f
	e.journal.Store(j)
	return nil
}

// create makes the journal's file number seq, new, and flushes the
// directory.
func (j *journal) create(seq int) (*os.File, error) {
	if err := j.e.fault("open"); err != nil {
		return nil, fmt.Errorf("starting the journal file %s: %w", journalPath(j.prefix, seq), err)
	}
	f, err := os.OpenFile(journalPath(j.prefix, seq), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("starting the journal: %w", err)
	}
	if err := SyncDir(filepath.Dir(j.prefix)); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// CutJournal starts a new journal file, to be called while writes are held
// (HoldWrites) right after reading the table for a snapshot: every write
// before it is in the older files, every later one in the new file.
// Calling drop removes the older files; call it once the snapshot is safely
// written. Without a journal it does nothing. The new file is made before
// the old one is closed: when it cannot be, the old one stays in use and
// the error says why. A journal whose file holds no record yet is not cut;
// a read-only one cannot be.
func (e *Store) CutJournal() (drop func() error, err error) {
	j := e.journal.Load()
	if j == nil {
		return func() error { return nil }, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.closed:
		return nil, errors.New("the journal is closed")
	case j.failed != nil:
		return nil, fmt.Errorf("the journal is read-only: %w", j.failed)
	}
	if j.written == 0 { // the older files hold everything so far
		e.grown.reset()
		return j.dropBefore(j.seq), nil
	}
	if err := j.flush(j.f); err != nil {
		return nil, fmt.Errorf("flushing the journal: %w", err)
	}
	e.SnapshotStep(StepJournalFlushed)
	f, err := j.create(j.seq + 1)
	if err != nil {
		return nil, err
	}
	e.SnapshotStep(StepJournalCreated)
	_ = j.f.Close() // flushed: nothing of it can be lost now
	j.seq, j.f, j.written = j.seq+1, f, 0
	j.synced = 0
	e.grown.reset()
	e.SnapshotStep(StepJournalSwitched)
	return j.dropBefore(j.seq), nil
}

// dropBefore returns a function that removes the journal files numbered
// below seq.
func (j *journal) dropBefore(seq int) func() error {
	return func() error {
		paths, seqs, err := JournalFiles(j.prefix)
		if err != nil {
			return err
		}
		for i, p := range paths {
			if seqs[i] < seq {
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				j.e.SnapshotStep(StepJournalDropped)
			}
		}
		return nil
	}
}

// FlushJournal flushes the journal's file to disk: with sync off (see
// StartJournal), what bounds the writes a power loss may take between
// snapshots. Without a journal it does nothing.
func (e *Store) FlushJournal() error {
	j := e.journal.Load()
	if j == nil {
		return nil
	}
	j.mu.Lock()
	f, closed := j.f, j.closed
	j.mu.Unlock()
	if closed {
		return nil
	}
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) { // closed: a cut flushed it
		return fmt.Errorf("flushing the journal: %w", err)
	}
	return nil
}

// closeJournal flushes and closes the journal; writes after it are
// refused.
func (e *Store) closeJournal() error {
	j := e.journal.Load()
	if j == nil {
		return nil
	}
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	close(j.stop)
	err := j.f.Sync()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// InjectJournalFault makes fault decide, until it is called with nil,
// whether the journal's next "write", "sync" (a flush) or "open" (a new
// file) fails, as a full or failing disk would: an error it returns stands
// for the system's, and a failed "write" writes half its bytes first. For
// tests.
func (e *Store) InjectJournalFault(fault func(op string) error) {
	if fault == nil {
		e.faults.Store(nil)
		return
	}
	e.faults.Store(&fault)
}

// fault returns the injected error of op, if any.
func (e *Store) fault(op string) error {
	if f := e.faults.Load(); f != nil {
		return (*f)(op)
	}
	return nil
}

// SyncDir flushes a directory, so that a file made or renamed in it stays
// (a no-op on Windows, where directories cannot be flushed).
func SyncDir(dir string) error {
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

// The steps of a snapshot at which SnapshotStep is called, in order: the
// journal's (CutJournal and the drop it returns) and the snapshot file's
// (dynamo.DataFile.Save). A crash at any of them loses no answered write:
// the crash tests kill a process at each.
const (
	StepTableRead       = "the table read (writes held)"
	StepJournalFlushed  = "the journal's file flushed"
	StepJournalCreated  = "the journal's new file made (the old one still open)"
	StepJournalSwitched = "the journal switched to its new file"
	StepTempCreated     = "the snapshot's temporary file made"
	StepTempWritten     = "the snapshot written to its temporary file"
	StepTempFlushed     = "the temporary file flushed"
	StepRenamed         = "the temporary file renamed over the snapshot"
	StepDirFlushed      = "the directory flushed"
	StepJournalDropped  = "an older journal file removed"
)

// SnapshotSteps are the steps in the order a snapshot takes them.
var SnapshotSteps = []string{StepTableRead, StepJournalFlushed, StepJournalCreated, StepJournalSwitched,
	StepTempCreated, StepTempWritten, StepTempFlushed, StepRenamed, StepDirFlushed, StepJournalDropped}

// OnSnapshotStep makes hook be called at each step of a snapshot, until it
// is called with nil. For the crash tests.
func (e *Store) OnSnapshotStep(hook func(step string)) {
	if hook == nil {
		e.stepHook.Store(nil)
		return
	}
	e.stepHook.Store(&hook)
}

// SnapshotStep calls the hook OnSnapshotStep set, if any.
func (e *Store) SnapshotStep(step string) {
	if h := e.stepHook.Load(); h != nil {
		(*h)(step)
	}
}
