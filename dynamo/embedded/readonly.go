package embedded

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"
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

// readOnly answers a write call with CodeReadOnly.
func readOnly(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusInsufficientStorage)
	_ = json.NewEncoder(w).Encode(map[string]string{
		"__type":  "com.amazonaws.dynamodb.v20120810#" + CodeReadOnly,
		"message": "the embedded store cannot keep writes now: its journal cannot be written; the write was not applied",
	})
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
