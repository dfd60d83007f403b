package live

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/taskgraph/taskgraph/domain"
)

// MinCursorKey is the least length of a cursor key, in bytes.
const MinCursorKey = 32

// A cursor names one event of one project's stream. It is the event's
// stream sequence encrypted and authenticated (AES-256-GCM) under the
// cursor key that every instance shares, bound to the project id as
// additional data:
//
//	base64url(version 0x01 ‖ nonce (12 bytes) ‖ GCM(seq, 8 bytes big-endian) ‖ tag (16 bytes))
//
// 50 characters whatever the sequence. The nonce is synthetic, an HMAC of
// (seq, project) under a key of its own (SIV-like), so one event always
// has the same cursor and the nonce only repeats where the whole cursor
// does. A client learns nothing from a cursor (not the sequence, so not
// how many events other projects had in between) and cannot make one: a
// cursor that another key made, that names another project, or that was
// changed in any bit fails to open and is refused exactly like a
// malformed one.
const (
	cursorVersion = 0x01
	cursorNonce   = 12
	cursorLen     = 1 + cursorNonce + 8 + 16
)

// Labels that derive the cursor's two keys, and the sync tokens' key, from
// the configured one.
const (
	cursorEncLabel   = "taskgraph live cursor v1: encryption"
	cursorNonceLabel = "taskgraph live cursor v1: nonce"
	syncTokenLabel   = "taskgraph sync token v1: encryption"
)

// errBadCursor is the one answer to every cursor this server did not make
// for the project: malformed, forged, tampered, another project's or
// another key's.
var errBadCursor = domain.Errorf(domain.EINVALID, "after is not a cursor of this project's events")

// Cursors makes and reads the cursors of the stream's events under one
// key (HubConfig.CursorKey). It is safe for concurrent use.
type Cursors struct {
	aead     cipher.AEAD
	nonceKey []byte
	sync     cipher.AEAD // sync tokens' (SealSync)
}

// NewCursors returns the cursors of key, which must hold at least
// MinCursorKey bytes (the server's -cursor-key, or a key derived from its
// secret). Instances that share a stream must share the key: each one
// reads the cursors the others made.
func NewCursors(key []byte) (*Cursors, error) {
	if len(key) < MinCursorKey {
		return nil, fmt.Errorf("the cursor key has %d bytes; it needs at least %d", len(key), MinCursorKey)
	}
	enc, err := hkdf.Key(sha256.New, key, nil, cursorEncLabel, 32)
	if err != nil {
		return nil, err
	}
	nk, err := hkdf.Key(sha256.New, key, nil, cursorNonceLabel, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(enc)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sk, err := hkdf.Key(sha256.New, key, nil, syncTokenLabel, 32)
	if err != nil {
		return nil, err
	}
	sblock, err := aes.NewCipher(sk)
	if err != nil {
		return nil, err
	}
	sync, err := cipher.NewGCM(sblock)
	if err != nil {
		return nil, err
	}
	return &Cursors{aead: aead, nonceKey: nk, sync: sync}, nil
}

// ProcessCursors returns the cursors of a process without a configured
// key (a random key made once per process), as a hub started without one
// uses: what a handler without a hub seals its sync tokens with.
func ProcessCursors() *Cursors { return processCursors() }

// processCursors is the cursors of a hub started without a key: a random
// key made once per process, so that the hubs of one process (tests) read
// each other's cursors. The server always sets a key.
var processCursors = sync.OnceValue(func() *Cursors {
	key := make([]byte, MinCursorKey)
	_, _ = rand.Read(key)
	c, err := NewCursors(key)
	if err != nil {
		panic(err) // a 32-byte key is always accepted
	}
	return c
})

func (c *Cursors) nonce(project string, seq uint64) []byte {
	m := hmac.New(sha256.New, c.nonceKey)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	m.Write(b[:])
	m.Write([]byte(project))
	return m.Sum(nil)[:cursorNonce]
}

func aad(project string) []byte { return append([]byte{cursorVersion}, project...) }

// Cursor returns the cursor of the event at stream sequence seq of
// project: the same string every time for the same event.
func (c *Cursors) Cursor(project string, seq uint64) string {
	var plain [8]byte
	binary.BigEndian.PutUint64(plain[:], seq)
	out := make([]byte, 1, cursorLen)
	out[0] = cursorVersion
	n := c.nonce(project, seq)
	out = append(out, n...)
	out = c.aead.Seal(out, n, plain[:], aad(project))
	return base64.RawURLEncoding.EncodeToString(out)
}

// ParseCursor returns the stream sequence of a cursor that c made for
// project. Returns EINVALID, always with the same message, for anything
// else: a malformed cursor, one of another project, one made under
// another key, one changed in any way (a forged cursor learns nothing,
// not even how far it got).
func (c *Cursors) ParseCursor(project, cursor string) (uint64, error) {
	if len(cursor) != base64.RawURLEncoding.EncodedLen(cursorLen) {
		return 0, errBadCursor
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(raw) != cursorLen || raw[0] != cursorVersion {
		return 0, errBadCursor
	}
	n := raw[1 : 1+cursorNonce]
	plain, err := c.aead.Open(nil, n, raw[1+cursorNonce:], aad(project))
	if err != nil || len(plain) != 8 {
		return 0, errBadCursor
	}
	seq := binary.BigEndian.Uint64(plain)
	// Only the nonce c itself would choose: one cursor per event.
	if seq == 0 || !hmac.Equal(n, c.nonce(project, seq)) {
		return 0, errBadCursor
	}
	return seq, nil
}

// A sync token (graph's Query.sync) is sealed here too, under a key of its
// own derived from the cursor key, and bound to the viewer (the additional
// data), so that it is opaque, unforgeable, and another viewer's token
// fails to open like garbage:
//
//	base64url(0x02 ‖ nonce (12 bytes, random) ‖ GCM(flags ‖ stream sequence (8 bytes) ‖ body) ‖ tag (16 bytes))
//
// The stream sequence is where a subscription that continues the sync
// starts (Hub.Subscribe's after); flags says whether the sync it ends was
// final (syncFinal). The body is the sync's own (graph/synctoken.go).
const (
	syncTokenVersion = 0x02
	syncFinal        = 0x01
)

// errBadSyncToken is the one answer to every token this server did not
// seal for the viewer.
var errBadSyncToken = domain.Errorf(domain.EINVALID, "since is not a sync token of this viewer")

func syncAAD(viewer string) []byte { return append([]byte{syncTokenVersion}, viewer...) }

// SealSync seals a sync token for viewer: the stream sequence a
// subscription after it starts from, whether the sync ended with it
// (final), and the sync's body.
func (c *Cursors) SealSync(viewer string, final bool, streamSeq uint64, body []byte) string {
	plain := make([]byte, 9, 9+len(body))
	if final {
		plain[0] = syncFinal
	}
	binary.BigEndian.PutUint64(plain[1:], streamSeq)
	plain = append(plain, body...)
	out := make([]byte, 1+cursorNonce, 1+cursorNonce+len(plain)+c.sync.Overhead())
	out[0] = syncTokenVersion
	_, _ = rand.Read(out[1 : 1+cursorNonce])
	out = c.sync.Seal(out, out[1:1+cursorNonce], plain, syncAAD(viewer))
	return base64.RawURLEncoding.EncodeToString(out)
}

// OpenSync opens a sync token that c sealed for viewer (SealSync). Returns
// EINVALID, always with the same message, for anything else: garbage,
// another viewer's token, one changed in any bit, one of another key.
func (c *Cursors) OpenSync(viewer, token string) (final bool, streamSeq uint64, body []byte, err error) {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) < 1+cursorNonce+9+c.sync.Overhead() || raw[0] != syncTokenVersion {
		return false, 0, nil, errBadSyncToken
	}
	plain, err := c.sync.Open(nil, raw[1:1+cursorNonce], raw[1+cursorNonce:], syncAAD(viewer))
	if err != nil || len(plain) < 9 || plain[0]&^syncFinal != 0 {
		return false, 0, nil, errBadSyncToken
	}
	return plain[0] == syncFinal, binary.BigEndian.Uint64(plain[1:9]), plain[9:], nil
}
