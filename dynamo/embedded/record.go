package embedded

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
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
