package cursor

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"

	"github.com/oklog/ulid/v2"
	"github.com/taskgraph/taskgraph/domain"
)

// A sync token's layout (doc.go).
const (
	syncVersion     = 0x02
	syncFinal       = 0x01
	syncBodyVersion = 1
)

// errBadSyncToken is the one answer to every token these keys did not
// seal for the viewer, and to a body that does not read.
var errBadSyncToken = domain.Errorf(domain.EINVALID, "since is not a sync token of this viewer")

// Sync is what a sync token holds (docs/sync.md, "Tokens").
type Sync struct {
	// Final: the sync it ends has no more pages, so a subscription may
	// continue it (live's Hub.Subscribe takes the token as after).
	Final bool
	// StreamSeq is the live stream's last sequence before the page's
	// visibility read: where a subscription after the token starts.
	StreamSeq uint64
	// Epoch is the change log's (dynamo.Store.ChangeEpoch).
	Epoch string
	// Issued is when the changes not yet delivered began (Unix seconds):
	// a final page's visibility read, or the first page's of a sync with
	// more pages.
	Issued int64
	// ProfileRev is the viewer's profile as the client has it.
	ProfileRev int64
	// States are where the client stands in each project's change log.
	States []Project
}

// Mode is how a project of a sync token is read.
type Mode byte

const (
	// Read: the log above Pos, live entries upserts, gone entries
	// tombstones but those at or below Skip (a join: the client never had
	// them).
	Read Mode = iota
	// Leave: the viewer no longer sees the project; its log above Pos
	// becomes tombstones, but for gone entries at or below Skip, the
	// position the client had (they were delivered).
	Leave
)

// Project is where a client stands in one project's change log.
type Project struct {
	ID   string // the project's id (prj#<ULID>)
	Mode Mode
	// Pos is the position read up to; Skip see Mode; Seen the projectSeq
	// of the project as the client has it (Read), or the position of the
	// viewer's removal (Leave; 0: none, the project was deleted).
	Pos, Skip, Seen int64
}

// String names a project's state, for tests' messages.
func (p Project) String() string {
	return fmt.Sprintf("%s mode %d pos %d skip %d seen %d", p.ID, p.Mode, p.Pos, p.Skip, p.Seen)
}

func syncAAD(viewer string) []byte { return append([]byte{syncVersion}, viewer...) }

// SealSync seals t as a sync token for viewer: opaque, unforgeable, and
// bound to the viewer.
func (k *Keys) SealSync(viewer string, t *Sync) string {
	body := t.body()
	plain := make([]byte, 9, 9+len(body))
	if t.Final {
		plain[0] = syncFinal
	}
	binary.BigEndian.PutUint64(plain[1:], t.StreamSeq)
	plain = append(plain, body...)
	out := make([]byte, 1+nonceLen, 1+nonceLen+len(plain)+k.sync.Overhead())
	out[0] = syncVersion
	_, _ = rand.Read(out[1 : 1+nonceLen])
	out = k.sync.Seal(out, out[1:1+nonceLen], plain, syncAAD(viewer))
	return base64.RawURLEncoding.EncodeToString(out)
}

// OpenSync opens a sync token that k sealed for viewer (SealSync). Returns
// EINVALID, always with the same message, for anything else: garbage,
// another viewer's token, one changed in any bit, one of another key.
func (k *Keys) OpenSync(viewer, token string) (*Sync, error) {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) < 1+nonceLen+9+k.sync.Overhead() || raw[0] != syncVersion {
		return nil, errBadSyncToken
	}
	plain, err := k.sync.Open(nil, raw[1:1+nonceLen], raw[1+nonceLen:], syncAAD(viewer))
	if err != nil || len(plain) < 9 || plain[0]&^syncFinal != 0 {
		return nil, errBadSyncToken
	}
	t, ok := readBody(plain[9:])
	if !ok {
		return nil, errBadSyncToken
	}
	t.Final, t.StreamSeq = plain[0] == syncFinal, binary.BigEndian.Uint64(plain[1:9])
	return t, nil
}

// body is t's body (doc.go).
func (t *Sync) body() []byte {
	b := make([]byte, 0, 32+len(t.Epoch)+24*len(t.States))
	b = append(b, syncBodyVersion)
	b = binary.AppendUvarint(b, uint64(len(t.Epoch)))
	b = append(b, t.Epoch...)
	b = binary.AppendVarint(b, t.Issued)
	b = binary.AppendUvarint(b, uint64(t.ProfileRev))
	b = binary.AppendUvarint(b, uint64(len(t.States)))
	for _, p := range t.States {
		u := ulid.MustParseStrict(p.ID[len(p.ID)-26:])
		b = append(b, u[:]...)
		b = append(b, byte(p.Mode))
		b = binary.AppendUvarint(b, uint64(p.Pos))
		b = binary.AppendUvarint(b, uint64(p.Skip))
		b = binary.AppendUvarint(b, uint64(p.Seen))
	}
	return b
}

// readBody reads a body (doc.go); false when it does not read whole.
func readBody(b []byte) (*Sync, bool) {
	r := bodyReader{b: b}
	if r.byte() != syncBodyVersion {
		return nil, false
	}
	t := &Sync{Epoch: string(r.bytes(int(r.uvarint())))}
	t.Issued = r.varint()
	t.ProfileRev = int64(r.uvarint())
	n := r.uvarint()
	if r.bad || n > uint64(len(b)) {
		return nil, false
	}
	t.States = make([]Project, 0, n)
	for range n {
		var u ulid.ULID
		copy(u[:], r.bytes(16))
		p := Project{ID: domain.ProjectIDOf(u.String()), Mode: Mode(r.byte())}
		p.Pos, p.Skip, p.Seen = int64(r.uvarint()), int64(r.uvarint()), int64(r.uvarint())
		if p.Mode > Leave || p.Pos < 0 || p.Skip < 0 || p.Seen < 0 {
			return nil, false
		}
		t.States = append(t.States, p)
	}
	return t, !r.bad && len(r.b) == 0
}

// bodyReader reads a body, remembering whether anything failed.
type bodyReader struct {
	b   []byte
	bad bool
}

func (r *bodyReader) byte() byte {
	if len(r.b) == 0 {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *bodyReader) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *bodyReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<62 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *bodyReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}
