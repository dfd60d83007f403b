package embedded

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The journal (write-ahead log) of an embedded store keeps every write
// that was answered: each committed write call is appended to it, as the
// images its items have after the call, before the call is answered. A
// snapshot of the table (dynamo.DataFile) plus the journal written since
// is the table. Replay is idempotent: a record sets items to what they
// were after its write, so records that a snapshot already holds may be
// applied again over it.
//
// The journal is a sequence of files <prefix>.<n> (n counts up, 6 digits
// or more). Each file is a sequence of records:
//
//	length  uint32, little-endian: of the payload
//	crc     uint32, little-endian: CRC-32C (Castagnoli) of the payload
//	payload JSON: {"w":[{"t":table,"k":key,"i":item},…]}, "i" absent for
//	        an item the write deleted (or that does not exist after it)
//
// One record is one write call, so a transaction is all in one record or
// not at all. A record that ends early or fails its checksum ends the file
// (a crash in the middle of an append); everything before it is good.

// recordHeader is the size of a record's length and checksum.
const recordHeader = 8

// maxRecord bounds a record's length: a length past it is damage, not a
// record (a transaction of 100 items of 400 KB is under 41 MB).
const maxRecord = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends payload to b as one framed record.
func appendRecord(b, payload []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// ErrTorn is the error of ReadRecords for a journal whose last record is
// incomplete or damaged (a crash while it was appended).
var ErrTorn = errors.New("torn record")

// ReadRecords reads the framed records of a journal file. It returns the
// payloads of the complete records before the first that is cut short or
// fails its checksum, with good, the length of the file those take; err is
// then ErrTorn (wrapped, saying where), or a read error.
func ReadRecords(r io.Reader) (payloads [][]byte, good int64, err error) {
	br := bufio.NewReader(r)
	var hdr [recordHeader]byte
	for {
		n, err := io.ReadFull(br, hdr[:])
		if err == io.EOF {
			return payloads, good, nil
		}
		if err == io.ErrUnexpectedEOF {
			return payloads, good, fmt.Errorf("%w at offset %d: %d of %d header bytes", ErrTorn, good, n, recordHeader)
		}
		if err != nil {
			return payloads, good, err
		}
		size := binary.LittleEndian.Uint32(hdr[:4])
		if size > maxRecord {
			return payloads, good, fmt.Errorf("%w at offset %d: a length of %d bytes", ErrTorn, good, size)
		}
		p := make([]byte, size)
		if n, err := io.ReadFull(br, p); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return payloads, good, fmt.Errorf("%w at offset %d: %d of %d bytes", ErrTorn, good, n, size)
			}
			return payloads, good, err
		}
		if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			return payloads, good, fmt.Errorf("%w at offset %d: checksum mismatch", ErrTorn, good)
		}
		payloads = append(payloads, p)
		good += recordHeader + int64(size)
	}
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

// journal is the open journal of a Store.
type journal struct {
	prefix string
	sync   bool // flush to disk before a write is answered

	mu      sync.Mutex // orders the writes and their appends
	seq     int        // the number of the file being written
	f       *os.File
	written int64 // bytes appended to f
	keys    map[string][]string

	syncMu sync.Mutex // one flush at a time; later writers wait and share it
	synced int64      // bytes of f known to be on disk
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
			continue // a snapshot's temporary file or anything else
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
// the store, and returns how many it applied. A file whose last record is
// torn is applied up to it, and torn is called with the file and why; the
// replay goes on. Replay must come before StartJournal.
func (e *Store) Replay(prefix string, torn func(path string, err error)) (records int, err error) {
	paths, _, err := JournalFiles(prefix)
	if err != nil {
		return 0, err
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return records, fmt.Errorf("reading the journal: %w", err)
		}
		payloads, _, rerr := ReadRecords(bytes.NewReader(b))
		if rerr != nil && torn != nil {
			torn(p, rerr)
		}
		for i, pl := range payloads {
			var rec record
			if err := json.Unmarshal(pl, &rec); err != nil {
				return records, fmt.Errorf("the journal %s, record %d: %w", p, i+1, err)
			}
			for _, im := range rec.W {
				if err := e.apply(im); err != nil {
					return records, fmt.Errorf("the journal %s, record %d: %w", p, i+1, err)
				}
			}
			records++
		}
	}
	return records, nil
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
// nothing; a power loss, what the system had not written yet).
func (e *Store) StartJournal(prefix string, sync bool) error {
	_, seqs, err := JournalFiles(prefix)
	if err != nil {
		return err
	}
	j := &journal{prefix: prefix, sync: sync, keys: map[string][]string{}}
	if len(seqs) > 0 {
		j.seq = seqs[len(seqs)-1]
	}
	if err := j.open(); err != nil {
		return err
	}
	e.journal.Store(j)
	return nil
}

// open starts the journal's next file.
func (j *journal) open() error {
	j.seq++
	f, err := os.OpenFile(journalPath(j.prefix, j.seq), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("starting the journal: %w", err)
	}
	if err := SyncDir(filepath.Dir(j.prefix)); err != nil {
		_ = f.Close()
		return err
	}
	j.f, j.written, j.synced = f, 0, 0
	return nil
}

// CutJournal starts a new journal file, to be called while writes are held
// (HoldWrites) right after reading the table for a snapshot: every write
// before it is in the older files, every later one in the new file.
// Calling drop removes the older files; call it once the snapshot is safely
// written. Without a journal it does nothing.
func (e *Store) CutJournal() (drop func() error, err error) {
	j := e.journal.Load()
	if j == nil {
		return func() error { return nil }, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	old := j.seq
	if err := j.f.Sync(); err != nil {
		return nil, fmt.Errorf("flushing the journal: %w", err)
	}
	_ = j.f.Close()
	if err := j.open(); err != nil {
		return nil, err
	}
	return func() error {
		paths, seqs, err := JournalFiles(j.prefix)
		if err != nil {
			return err
		}
		for i, p := range paths {
			if seqs[i] <= old {
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
		}
		return nil
	}, nil
}

// closeJournal flushes and closes the journal.
func (e *Store) closeJournal() error {
	j := e.journal.Swap(nil)
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	err := j.f.Sync()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// journaled serves a write call with the journal on: the call, the images
// of the items it names and their record are one step (writes are
// serialized, so the records are in the order the writes took effect);
// the answer goes out once the record is written (and, with sync,
// flushed).
func (e *Store) journaled(j *journal, w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading the request", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	j.mu.Lock()
	e.Server.ServeHTTP(rec, r)
	var end int64
	if rec.code == http.StatusOK {
		end, err = j.append(e, r.Header.Get("X-Amz-Target"), body)
	}
	j.mu.Unlock()
	if err == nil && end > 0 && j.sync {
		err = j.syncTo(end)
	}
	if err != nil { // the write took effect, but may not be kept: say so, as a server error
		http.Error(w, "journal: "+err.Error(), http.StatusInternalServerError)
		return
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.code)
	_, _ = w.Write(rec.body.Bytes())
}

// append writes the record of a write call that succeeded and returns the
// journal's length after it (0: nothing to write). j.mu is held.
func (j *journal) append(e *Store, target string, body []byte) (int64, error) {
	keys, err := j.keysOf(e, target[strings.LastIndexByte(target, '.')+1:], body)
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	var rec record
	for _, k := range keys {
		out, err := e.call("GetItem", map[string]any{"TableName": k.Table, "Key": k.Key, "ConsistentRead": true})
		if err != nil {
			return 0, err
		}
		var got struct {
			Item map[string]json.RawMessage
		}
		if err := json.Unmarshal(out, &got); err != nil {
			return 0, err
		}
		if len(got.Item) > 0 {
			k.Item = got.Item
		}
		rec.W = append(rec.W, k)
	}
	payload, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	if _, err := j.f.Write(appendRecord(nil, payload)); err != nil {
		return 0, fmt.Errorf("appending: %w", err)
	}
	j.written += recordHeader + int64(len(payload))
	return j.written, nil
}

// syncTo returns once the journal's first end bytes are on disk: the first
// writer to get here flushes everything written so far, for the writers
// that wait behind it too (group commit).
func (j *journal) syncTo(end int64) error {
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	if j.synced >= end {
		return nil
	}
	j.mu.Lock()
	f, written := j.f, j.written
	j.mu.Unlock()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("flushing: %w", err)
	}
	j.synced = written
	return nil
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
