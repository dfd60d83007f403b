package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"

	"github.com/taskgraph/taskgraph/domain"
)

// An event cursor's layout (doc.go).
const (
	eventVersion = 0x01
	nonceLen     = 12
	eventLen     = 1 + nonceLen + 8 + 16
)

// errBadCursor is the one answer to every event cursor these keys did not
// make for the project: malformed, forged, tampered, another project's or
// another key's.
var errBadCursor = domain.Errorf(domain.EINVALID, "after is not a cursor of this project's events")

func (k *Keys) nonce(project string, seq uint64) []byte {
	m := hmac.New(sha256.New, k.nonceKey)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	m.Write(b[:])
	m.Write([]byte(project))
	return m.Sum(nil)[:nonceLen]
}

func eventAAD(project string) []byte { return append([]byte{eventVersion}, project...) }

// Cursor returns the cursor of the event at stream sequence seq of
// project: the same string every time for the same event.
func (k *Keys) Cursor(project string, seq uint64) string {
	var plain [8]byte
	binary.BigEndian.PutUint64(plain[:], seq)
	out := make([]byte, 1, eventLen)
	out[0] = eventVersion
	n := k.nonce(project, seq)
	out = append(out, n...)
	out = k.events.Seal(out, n, plain[:], eventAAD(project))
	return base64.RawURLEncoding.EncodeToString(out)
}

// ParseCursor returns the stream sequence of an event cursor that k made
// for project. Returns EINVALID, always with the same message, for
// anything else: a malformed cursor, one of another project, one made
// under another key, one changed in any way (a forged cursor learns
// nothing, not even how far it got).
func (k *Keys) ParseCursor(project, cursor string) (uint64, error) {
	if len(cursor) != base64.RawURLEncoding.EncodedLen(eventLen) {
		return 0, errBadCursor
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(raw) != eventLen || raw[0] != eventVersion {
		return 0, errBadCursor
	}
	n := raw[1 : 1+nonceLen]
	plain, err := k.events.Open(nil, n, raw[1+nonceLen:], eventAAD(project))
	if err != nil || len(plain) != 8 {
		return 0, errBadCursor
	}
	seq := binary.BigEndian.Uint64(plain)
	// Only the nonce k itself would choose: one cursor per event.
	if seq == 0 || !hmac.Equal(n, k.nonce(project, seq)) {
		return 0, errBadCursor
	}
	return seq, nil
}
