package embedded

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The journal (write-ahead log) of an embedded store keeps every write
// that was answered: each committed write call is appended to it, as the
// images its items have after the call, before the call is answered. A
// snapshot of the table (dynamo.DataFile) plus the journal written since
// is the table. Replay is idempotent: a record sets items to what they
// were after its write, so records that a snapshot already holds may be
// applied again over it.
//
// The journal is a sequence of files <prefix>.<n> (n counts up by one, 6
// digits or more). Each file is a sequence of records:
//
//	length  uint32, little-endian: of the payload
//	crc     uint32, little-endian: CRC-32C (Castagnoli) of the payload
//	payload JSON: {"w":[{"t":table,"k":key,"i":item},…]}, "i" absent for
//	        an item the write deleted (or that does not exist after it)
//
// One record is one write call, so a transaction is all in one record or
// not at all.
//
// Damage and torn tails. A crash in the middle of an append can leave the
// last record of the newest file incomplete (a torn tail); nothing else
// can be bad. A record is whole when its length is between 2 and maxRecord,
// its payload is all there, is a JSON object ({…}) and matches its
// checksum. When a record is not whole, the rest of the file is searched
// for a whole record at any offset: a JSON payload never holds the bytes
// of a record's header (JSON text escapes every byte below 0x20, and a
// length below maxRecord has a zero top byte), so a whole record further
// on is one the journal wrote, and the bad record is damage, not a tear.
// Replay refuses damage, naming the file and the offset; only the last
// record of the newest file may be torn (it is dropped with a warning,
// its bytes kept beside the file). A journal file missing between two
// others is damage too.
//
// Full and failing disks. A write whose record cannot be appended (or,
// with sync, flushed) is not applied: the images its items had before it
// are put back, and it is answered CodeReadOnly (HTTP 507), which the SDK
// does not retry and the dynamo package maps to "unavailable". The store
// is then read-only: it says so once in its log, refuses every write at
// once (reads go on), and tries once a second to write (and flush) a
// probe record of probeSize bytes; the first that succeeds ends the
// read-only state, with one more log line.

// recordHeader is the size of a record's length and checksum.
const recordHeader = 8

// minRecord and maxRecord bound a record's length: the smallest JSON
// object is 2 bytes; a length past maxRecord is damage, not a record (a
// transaction of 100 items of 400 KB is under 41 MB). Outside them, a
// header of zeros (a file extended but never written) is no record either.
const (
	minRecord = 2
	maxRecord = 64 << 20
)

// CodeReadOnly is the error code (the "__type" of DynamoDB's JSON errors)
// of the answer, HTTP 507, to a write the journal could not keep: the
// write was not applied, and the store takes no writes until its journal
// can be written again. Neither the code nor the status is one the SDK
// retries.
const CodeReadOnly = "StoreReadOnlyException"

// probeEvery is how often a read-only store tries to write again;
// probeSize the size of the record it writes to try (and takes back): room
// for it is room for the usual write.
const (
	probeEvery = time.Second
	probeSize  = 64 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends payload to b as one framed record.
func appendRecord(b, payload []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// ErrTorn is the error of ReadRecords for a journal whose last record is
// incomplete or damaged, with no whole record after it (a crash while it
// was appended).
var ErrTorn = errors.New("torn record")

// ErrDamaged is the error of ReadRecords for a journal with a record that
// is not whole before a whole one: damage, not a crash.
var ErrDamaged = errors.New("damaged record")

// ReadRecords reads the framed records of a journal file. It returns the
// payloads of the whole records before the first that is not, with good,
// the length of the file those take; err is then ErrTorn when no whole
// record follows it, ErrDamaged when one does (wrapped, saying where), or
// a read error.
func ReadRecords(r io.Reader) (payloads [][]byte, good int64, err error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	off := 0
	for off < len(b) {
		p, why := recordAt(b, off)
		if why != "" {
			for next := off + 1; next+recordHeader+minRecord <= len(b); next++ {
				if _, bad := recordAt(b, next); bad == "" {
					return payloads, int64(off), fmt.Errorf("%w at offset %d: %s, and a whole record at offset %d after it", ErrDamaged, off, why, next)
				}
			}
			return payloads, int64(off), fmt.Errorf("%w at offset %d: %s", ErrTorn, off, why)
		}
		payloads = append(payloads, p)
		off += recordHeader + len(p)
	}
	return payloads, int64(off), nil
}

// recordAt returns the payload of the record at b[off:], or why there is
// no whole record there.
func recordAt(b []byte, off int) (payload []byte, why string) {
	rest := b[off:]
	if len(rest) < recordHeader {
		return nil, fmt.Sprintf("%d of %d header bytes", len(rest), recordHeader)
	}
	size := binary.LittleEndian.Uint32(rest)
	if size < minRecord || size > maxRecord {
		return nil, fmt.Sprintf("a length of %d bytes", size)
	}
	if int64(len(rest)-recordHeader) < int64(size) {
		return nil, fmt.Sprintf("%d of %d bytes", len(rest)-recordHeader, size)
	}
	p := rest[recordHeader : recordHeader+int(size)]
	if p[0] != '{' || p[len(p)-1] != '}' {
		return nil, "no JSON object"
	}
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(rest[4:]) {
		return nil, "checksum mismatch"
	}
	return p, ""
}

// record is a journal record's payload: the items one write call left.
type record struct {
	W []image `json:"w"`
}

// image is one item after a write: Item nil when there is none.
type image struct {
	Table string                     `json:"t"`
	Key   map[string]json.RawMessage `json:"k"`
	Item  map[string]json.RawMessage `json:"i,omitempty"`
}

// rawRecord is a record as Replay reads it: the images' JSON handed to the
// engine as it is.
type rawRecord struct {
	W []struct {
		Table string          `json:"t"`
		Key   json.RawMessage `json:"k"`
		Item  json.RawMessage `json:"i"`
	} `json:"w"`
}

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

// JournalFiles returns the journal files of prefix, oldest first, with
// their numbers.
func JournalFiles(prefix string) (paths []string, seqs []int, err error) {
	matches, err := filepath.Glob(prefix + ".*")
	if err != nil {
		return nil, nil, err
	}
	type file struct {
		path string
		seq  int
	}
	var files []file
	for _, m := range matches {
		n, err := strconv.Atoi(strings.TrimPrefix(m, prefix+"."))
		if err != nil || n <= 0 {
			continue // a snapshot's temporary file, a torn tail kept aside, anything else
		}
		files = append(files, file{m, n})
	}
	slices.SortFunc(files, func(a, b file) int { return a.seq - b.seq })
	for _, f := range files {
		paths, seqs = append(paths, f.path), append(seqs, f.seq)
	}
	return paths, seqs, nil
}

func journalPath(prefix string, seq int) string { return fmt.Sprintf("%s.%06d", prefix, seq) }

// Replay applies the records of prefix's journal files, oldest first, to
// the store, and returns how many it applied. Damage (see the journal's
// comment) is an error naming the file and the offset, and so is a file
// missing between two others. A torn last record of the newest file is
// dropped: its bytes are kept in a file beside it (kept), the file is cut
// to its whole records, and torn is called with the file, kept and why;
// the replay goes on. Replay must come before StartJournal.
func (e *Store) Replay(prefix string, torn func(path, kept string, err error)) (records int, err error) {
	paths, seqs, err := JournalFiles(prefix)
	if err != nil {
		return 0, err
	}
	for i, p := range paths {
		if i > 0 && seqs[i] != seqs[i-1]+1 {
			return records, fmt.Errorf("the journal file %s is missing (between %s and %s)",
				journalPath(prefix, seqs[i-1]+1), filepath.Base(paths[i-1]), filepath.Base(p))
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return records, fmt.Errorf("reading the journal: %w", err)
		}
		payloads, good, rerr := ReadRecords(bytes.NewReader(b))
		switch {
		case rerr == nil:
		case errors.Is(rerr, ErrTorn) && i == len(paths)-1:
			kept, err := keepTornTail(p, b, good)
			if err != nil {
				return records, err
			}
			if torn != nil {
				torn(p, kept, rerr)
			}
		case errors.Is(rerr, ErrTorn):
			return records, fmt.Errorf("the journal file %s is damaged: its last record is bad (%v), and newer journal files follow it", p, rerr)
		case errors.Is(rerr, ErrDamaged):
			return records, fmt.Errorf("the journal file %s is damaged: %v", p, rerr)
		default:
			return records, fmt.Errorf("reading the journal %s: %w", p, rerr)
		}
		eng := e.Server.Engine()
		for n, pl := range payloads {
			var rec rawRecord
			if err := json.Unmarshal(pl, &rec); err != nil {
				return records, fmt.Errorf("the journal %s, record %d: %w", p, n+1, err)
			}
			for _, im := range rec.W {
				var item []byte
				if len(im.Item) > 0 && string(im.Item) != "null" {
					item = im.Item
				}
				if err := eng.Set(im.Table, im.Key, item); err != nil {
					return records, fmt.Errorf("the journal %s, record %d: %w", p, n+1, err)
				}
			}
			records++
			e.grown.add(1, int64(recordHeader+len(pl)))
		}
	}
	return records, nil
}

// keepTornTail writes the bytes of the journal file path (read as b) past
// its whole records (good) to a new file beside it, then cuts the file to
// its whole records, so that the next file starts after whole records
// only. It returns the new file's name.
func keepTornTail(path string, b []byte, good int64) (kept string, err error) {
	k, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".torn-*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("keeping the torn end of the journal %s: %w", path, err)
	}
	_, err = k.Write(b[good:])
	if err == nil {
		err = k.Sync()
	}
	if cerr := k.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Truncate(path, good)
	}
	if err == nil {
		err = syncFile(path)
	}
	if err == nil {
		err = SyncDir(filepath.Dir(path))
	}
	if err != nil {
		return "", fmt.Errorf("keeping the torn end of the journal %s: %w", path, err)
	}
	return k.Name(), nil
}

// syncFile flushes the file at path to disk.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// apply sets one item to its image.
func (e *Store) apply(im image) error {
	if im.Item != nil {
		_, err := e.call("PutItem", map[string]any{"TableName": im.Table, "Item": im.Item})
		return err
	}
	_, err := e.call("DeleteItem", map[string]any{"TableName": im.Table, "Key": im.Key})
	return err
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
	f, err := j.create(j.seq + 1)
	if err != nil {
		return nil, err
	}
	_ = j.f.Close() // flushed: nothing of it can be lost now
	j.seq, j.f, j.written = j.seq+1, f, 0
	j.synced = 0
	e.grown.reset()
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

// ReadOnly reports whether the store refuses writes because its journal
// cannot be written, why, and how many writes it refused so far.
func (e *Store) ReadOnly() (readOnly bool, why error, refused int) {
	j := e.journal.Load()
	if j == nil {
		return false, nil, 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.failed != nil, j.failed, j.refused
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

// journaled serves a write call with the journal on, and reports whether
// the table may have changed. The images of the items the call names
// before it, the call, their images after it and the record of those are
// one step (writes are serialized, so the records are in the order the
// writes took effect); the answer goes out once the record is written
// (and, with sync, flushed). A record that cannot be written or flushed
// puts the images before it back and answers CodeReadOnly; so is every
// write while the journal is read-only.
func (e *Store) journaled(j *journal, w http.ResponseWriter, r *http.Request) (changed bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading the request", http.StatusBadRequest)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	target := r.Header.Get("X-Amz-Target")
	op := target[strings.LastIndexByte(target, '.')+1:]
	j.mu.Lock()
	if j.closed || j.failed != nil {
		j.refused++
		j.mu.Unlock()
		readOnly(w)
		return false
	}
	keys, kerr := j.keysOf(e, op, body)
	var before []image
	if kerr == nil {
		before, kerr = j.images(e, keys)
	}
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	e.Server.ServeHTTP(rec, r)
	var c *commit
	switch {
	case rec.code != http.StatusOK || (kerr == nil && len(keys) == 0):
		// Refused by the store (nothing changed), or a call on tables.
	case kerr != nil:
		// A write the store took but whose items could not be named or
		// read: it cannot be journaled, nor put back.
		err = fmt.Errorf("naming the items of a %s: %w", op, kerr)
	default:
		c, err = j.append(e, keys, before)
		if err != nil {
			if uerr := j.undo(before); uerr != nil {
				err = fmt.Errorf("%w; and putting the items back failed: %v", err, uerr)
				j.log.Error("the embedded store could not put back a write its journal did not keep: the table holds it, the journal does not",
					"call", op, "err", err)
			}
			j.fail(err)
			j.refused++
		}
	}
	j.mu.Unlock()
	if err == nil && c != nil && j.sync {
		err = j.syncTo(c)
	}
	switch {
	case c == nil && err != nil && kerr != nil:
		j.log.Error("the embedded store applied a write it could not journal", "call", op, "err", err)
		http.Error(w, "journal: "+err.Error(), http.StatusInternalServerError)
		return true
	case err != nil:
		readOnly(w)
		return false
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.code)
	_, _ = w.Write(rec.body.Bytes())
	return true
}

// readOnly answers a write call with CodeReadOnly.
func readOnly(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusInsufficientStorage)
	_ = json.NewEncoder(w).Encode(map[string]string{
		"__type":  "com.amazonaws.dynamodb.v20120810#" + CodeReadOnly,
		"message": "the embedded store cannot keep writes now: its journal cannot be written; the write was not applied",
	})
}

// images returns the items with keys as they are now (Item nil for none).
func (j *journal) images(e *Store, keys []image) ([]image, error) {
	out := make([]image, 0, len(keys))
	for _, k := range keys {
		got, err := e.call("GetItem", map[string]any{"TableName": k.Table, "Key": k.Key, "ConsistentRead": true})
		if err != nil {
			return nil, err
		}
		var item struct {
			Item map[string]json.RawMessage
		}
		if err := json.Unmarshal(got, &item); err != nil {
			return nil, err
		}
		if len(item.Item) > 0 {
			k.Item = item.Item
		}
		out = append(out, k)
	}
	return out, nil
}

// undo puts items back as they were (images from before a write). j.mu is
// held.
func (j *journal) undo(before []image) error {
	for i := len(before) - 1; i >= 0; i-- {
		if err := j.e.apply(before[i]); err != nil {
			return err
		}
	}
	return nil
}

// append writes the record of a write call that succeeded, the items with
// keys as they are now; before are their images before it. On an error
// the file is cut back to its whole records. j.mu is held.
func (j *journal) append(e *Store, keys, before []image) (*commit, error) {
	after, err := j.images(e, keys)
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(record{W: after})
	if err != nil {
		return nil, err
	}
	if err := j.write(appendRecord(nil, payload)); err != nil {
		return nil, err
	}
	j.e.grown.add(1, int64(recordHeader+len(payload)))
	c := &commit{end: j.written, before: before}
	if j.sync {
		j.pending = append(j.pending, c)
	}
	return c, nil
}

// write appends b, one or more whole records, to the journal's file. On
// an error the file is cut back to its whole records (should that fail
// too, the probes cut it before anything else is appended). j.mu is held.
func (j *journal) write(b []byte) error {
	var err error
	if err = j.e.fault("write"); err != nil {
		_, _ = j.f.Write(b[:len(b)/2]) // as a disk that filled up in the middle
	} else {
		_, err = j.f.Write(b)
	}
	if err != nil {
		_ = j.f.Truncate(j.written)
		return fmt.Errorf("appending to the journal %s: %w", j.f.Name(), err)
	}
	j.written += int64(len(b))
	return nil
}

// flush flushes f to disk.
func (j *journal) flush(f *os.File) error {
	if err := j.e.fault("sync"); err != nil {
		return err
	}
	return f.Sync()
}

// syncTo returns once c's record is on disk: the first writer to get here
// flushes everything written so far, for the writers that wait behind it
// too (group commit). When the flush fails, every record written since the
// last good one is put back, and the journal goes read-only.
func (j *journal) syncTo(c *commit) error {
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	j.mu.Lock()
	if c.done {
		j.mu.Unlock()
		return c.err
	}
	f, written := j.f, j.written
	j.mu.Unlock()
	err := j.flush(f)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.flushed(written, err)
	if !c.done { // cannot be: c was written before written was read
		return errors.New("the journal lost track of a record")
	}
	return c.err
}

// flushed records the outcome of a flush of the file's first upTo bytes.
// On an error the records written since the last good flush are put back,
// newest first, and cut from the file, and the journal goes read-only.
// j.mu and j.syncMu are held.
func (j *journal) flushed(upTo int64, err error) {
	if err == nil {
		j.synced = upTo
		keep := j.pending[:0]
		for _, c := range j.pending {
			if c.end <= upTo {
				c.done = true
			} else {
				keep = append(keep, c)
			}
		}
		clear(j.pending[len(keep):])
		j.pending = keep
		return
	}
	err = fmt.Errorf("flushing the journal %s: %w", j.f.Name(), err)
	for i := len(j.pending) - 1; i >= 0; i-- {
		c := j.pending[i]
		if uerr := j.undo(c.before); uerr != nil {
			j.log.Error("the embedded store could not put back a write its journal did not keep: the table holds it, the journal does not",
				"err", uerr)
		}
		c.done, c.err = true, err
	}
	n := len(j.pending)
	j.pending = nil
	j.written = j.synced
	_ = j.f.Truncate(j.written)
	j.fail(err)
	j.refused += n
}

// fail makes the journal read-only for err, saying so once, and starts
// the probes. j.mu is held.
func (j *journal) fail(err error) {
	if j.failed != nil || j.closed {
		return
	}
	j.failed, j.failedAt, j.refused = err, time.Now(), 0
	j.log.Error("the embedded store is read-only: its journal cannot be written, so no write is applied or answered as kept "+
		"(each is answered SERVICE_UNAVAILABLE; reads go on); it tries to write again every second and says when it can",
		"err", err)
	go j.probes()
}

// probes tries every probeEvery to write again, until it can or the
// journal closes.
func (j *journal) probes() {
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		select {
		case <-j.stop:
			return
		case <-t.C:
			if j.probe() {
				return
			}
		}
	}
}

// probe tries once to write again: the file cut back to its whole records
// and flushed, then a record of probeSize bytes written and flushed, and
// taken back. It reports whether the journal is writable.
func (j *journal) probe() bool {
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.failed == nil || j.closed {
		return true
	}
	if err := j.f.Truncate(j.written); err != nil {
		return false
	}
	if j.sync && len(j.pending) > 0 {
		err := j.flush(j.f)
		j.flushed(j.written, err)
		if err != nil {
			return false
		}
	}
	pad := bytes.Repeat([]byte{'x'}, probeSize)
	payload := append(append([]byte(`{"w":[],"probe":"`), pad...), `"}`...)
	err := j.write(appendRecord(nil, payload))
	if err == nil {
		err = j.flush(j.f)
		j.written -= int64(recordHeader + len(payload)) // taken back, written or not
		if terr := j.f.Truncate(j.written); err == nil {
			err = terr
		}
	}
	if err != nil {
		return false
	}
	j.log.Info("the embedded store takes writes again: its journal can be written",
		"after", time.Since(j.failedAt).Round(time.Millisecond), "refused", j.refused, "cause", j.failed)
	j.failed, j.refused = nil, 0
	return true
}

// keysOf returns the keys of the items a write call names, in the order
// it names them, each once.
func (j *journal) keysOf(e *Store, op string, body []byte) ([]image, error) {
	type target struct {
		TableName string
		Item, Key map[string]json.RawMessage
	}
	var targets []target
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem":
		var t target
		if err := json.Unmarshal(body, &t); err != nil {
			return nil, err
		}
		targets = append(targets, t)
	case "BatchWriteItem":
		var in struct {
			RequestItems map[string][]struct {
				PutRequest    *struct{ Item map[string]json.RawMessage }
				DeleteRequest *struct{ Key map[string]json.RawMessage }
			}
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, err
		}
		for table, reqs := range in.RequestItems {
			for _, r := range reqs {
				switch {
				case r.PutRequest != nil:
					targets = append(targets, target{TableName: table, Item: r.PutRequest.Item})
				case r.DeleteRequest != nil:
					targets = append(targets, target{TableName: table, Key: r.DeleteRequest.Key})
				}
			}
		}
	case "TransactWriteItems":
		var in struct {
			TransactItems []struct{ Put, Update, Delete *target }
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, err
		}
		for _, it := range in.TransactItems {
			for _, t := range []*target{it.Put, it.Update, it.Delete} {
				if t != nil {
					targets = append(targets, *t)
				}
			}
		}
	default:
		return nil, nil // table calls: the table is made at every start
	}
	var out []image
	seen := map[string]bool{}
	for _, t := range targets {
		key := t.Key
		if key == nil {
			names, err := j.keyNames(e, t.TableName)
			if err != nil {
				return nil, err
			}
			key = map[string]json.RawMessage{}
			for _, n := range names {
				key[n] = t.Item[n]
			}
		}
		id, _ := json.Marshal([]any{t.TableName, key}) // maps marshal sorted: one id per key
		if !seen[string(id)] {
			seen[string(id)] = true
			out = append(out, image{Table: t.TableName, Key: key})
		}
	}
	return out, nil
}

// keyNames returns the key attributes of a table, asked once.
func (j *journal) keyNames(e *Store, table string) ([]string, error) {
	if names, ok := j.keys[table]; ok {
		return names, nil
	}
	out, err := e.call("DescribeTable", map[string]any{"TableName": table})
	if err != nil {
		return nil, err
	}
	var d struct {
		Table struct {
			KeySchema []struct{ AttributeName string }
		}
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, err
	}
	var names []string
	for _, k := range d.Table.KeySchema {
		names = append(names, k.AttributeName)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("table %s has no key schema", table)
	}
	j.keys[table] = names
	return names, nil
}

// call makes one call to minidyn in-process and returns its answer.
func (e *Store) call(op string, in any) ([]byte, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	e.Server.ServeHTTP(rec, req)
	if rec.code != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", op, rec.code, bytes.TrimSpace(rec.body.Bytes()))
	}
	return rec.body.Bytes(), nil
}

// recorder is an http.ResponseWriter that keeps the answer.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.body.Write(p)
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
