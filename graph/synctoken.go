package graph

import (
	"encoding/binary"
	"errors"

	"github.com/oklog/ulid/v2"
)

// A sync token's body (docs/sync.md, "Tokens"); live.Cursors seals it,
// bound to the viewer, with the stream position of projectEvents. It is
// the client's position in each of its projects' change logs:
//
//	version (1) ‖ epoch (uvarint length, bytes) ‖ issued (varint, Unix s)
//	‖ profile rev (uvarint) ‖ projects (uvarint count) ‖ per project:
//	ULID (16 bytes) ‖ mode (1) ‖ pos, skip, seen (uvarints)
//
// about 20 bytes a project.

const syncTokenBodyVersion = 1

// syncMode is how a project of a token is read.
type syncMode byte

const (
	// modeRead: the log above pos, live entries upserts, gone entries
	// tombstones but those at or below skip (a join: the client never had
	// them).
	modeRead syncMode = iota
	// modeLeave: the viewer no longer sees the project; its log above pos
	// becomes tombstones, but for gone entries at or below skip, the
	// position the client had (they were delivered).
	modeLeave
)

// projectState is where a client stands in one project's change log.
type projectState struct {
	id   string // the project's id
	mode syncMode
	// pos is the position read up to; skip see syncMode; seen the
	// projectSeq of the project as the client has it (modeRead), or the
	// position of the viewer's removal (modeLeave; 0: none, the project
	// was deleted).
	pos, skip, seen int64
}

// syncToken is the body of a sync token.
type syncToken struct {
	// epoch is the change log's (dynamo.Store.ChangeEpoch).
	epoch string
	// issued is when the changes not yet delivered began (Unix seconds): a
	// final page's visibility read, or the first page's of a sync with
	// more pages.
	issued int64
	// profileRev is the viewer's profile as the client has it.
	profileRev int64
	projects   []projectState
}

var errTokenBody = errors.New("malformed sync token body")

func (t *syncToken) encode() []byte {
	b := make([]byte, 0, 32+len(t.epoch)+24*len(t.projects))
	b = append(b, syncTokenBodyVersion)
	b = binary.AppendUvarint(b, uint64(len(t.epoch)))
	b = append(b, t.epoch...)
	b = binary.AppendVarint(b, t.issued)
	b = binary.AppendUvarint(b, uint64(t.profileRev))
	b = binary.AppendUvarint(b, uint64(len(t.projects)))
	for _, p := range t.projects {
		u := ulid.MustParseStrict(p.id[len(p.id)-26:])
		b = append(b, u[:]...)
		b = append(b, byte(p.mode))
		b = binary.AppendUvarint(b, uint64(p.pos))
		b = binary.AppendUvarint(b, uint64(p.skip))
		b = binary.AppendUvarint(b, uint64(p.seen))
	}
	return b
}

func decodeToken(b []byte) (*syncToken, error) {
	r := tokenReader{b: b}
	if r.byte() != syncTokenBodyVersion {
		return nil, errTokenBody
	}
	t := &syncToken{epoch: string(r.bytes(int(r.uvarint())))}
	t.issued = r.varint()
	t.profileRev = int64(r.uvarint())
	n := r.uvarint()
	if r.err != nil || n > uint64(len(b)) {
		return nil, errTokenBody
	}
	t.projects = make([]projectState, 0, n)
	for range n {
		var u ulid.ULID
		copy(u[:], r.bytes(16))
		p := projectState{id: "prj#" + u.String(), mode: syncMode(r.byte())}
		p.pos, p.skip, p.seen = int64(r.uvarint()), int64(r.uvarint()), int64(r.uvarint())
		if p.mode > modeLeave || p.pos < 0 || p.skip < 0 || p.seen < 0 {
			return nil, errTokenBody
		}
		t.projects = append(t.projects, p)
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errTokenBody
	}
	return t, nil
}

// tokenReader reads a token body, keeping the first error.
type tokenReader struct {
	b   []byte
	err error
}

func (r *tokenReader) byte() byte {
	if len(r.b) == 0 {
		r.err = errTokenBody
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *tokenReader) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.err = errTokenBody
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *tokenReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<62 {
		r.err = errTokenBody
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *tokenReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errTokenBody
		return 0
	}
	r.b = r.b[n:]
	return v
}
