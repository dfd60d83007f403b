package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

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
