package etag

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"

	"github.com/taskgraph/taskgraph/domain"
)

// An ETag is "<hash>.<filter>.<projects>": the hash (16 bytes of SHA-256,
// base64url) of everything the answer stands on, the filter of the other
// users it shows (filterBits bits, base64url; empty when none) and the
// ULIDs of the projects whose data it shows, sorted, one after the other
// (26 characters each): what the check reads again. Every character is
// one an entity tag may hold.

// version names the rules the tags are made by: a change of them (or of
// what an answer looks like) changes every tag.
const version = "tg1"

// filterBits is the size of the users' filter: with k = 3, about 3 in 100
// pending profiles of users not shown are taken for shown ones with 30
// users shown (each only costs a 200 instead of a 304).
const filterBits = 256

// stands is what a tag stands on.
type stands struct {
	build, viewer, identity string
	today                   string // the server's date: overdueTasks' default asOf
	profile                 *domain.User
	projects                []string // sorted
	seqs                    []int64  // of projects
	filter                  []byte   // nil: no other user shown
}

// tag returns the ETag of s (without its quotes).
func (s *stands) tag() string {
	var b strings.Builder
	b.WriteString(s.sum())
	b.WriteByte('.')
	if s.filter != nil {
		b.WriteString(base64.RawURLEncoding.EncodeToString(s.filter))
	}
	b.WriteByte('.')
	for _, id := range s.projects {
		b.WriteString(id[len(id)-domain.ULIDLen:])
	}
	return b.String()
}

// sum is the hash of s, base64url.
func (s *stands) sum() string {
	h := sha256.New()
	field := func(v string) {
		_ = binary.Write(h, binary.BigEndian, uint32(len(v)))
		h.Write([]byte(v))
	}
	field(version)
	field(s.build)
	field(s.viewer)
	field(s.identity)
	field(s.today)
	profileDigest(field, s.profile)
	for i, id := range s.projects {
		field(id)
		field(strconv.FormatInt(s.seqs[i], 10))
	}
	field(string(s.filter))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// profileDigest writes into h what the viewer's profile shows: their
// name, email, when it was made, its rev and its copies of their projects
// (which projects they see, and their names).
func profileDigest(field func(string), u *domain.User) {
	field(u.ID)
	field(u.Name)
	if u.Email != nil {
		field("@" + *u.Email)
	} else {
		field("")
	}
	field(u.CreatedAt.UTC().Format("2006-01-02T15:04:05.999999999Z"))
	field(strconv.Itoa(u.Rev))
	copies := make([]string, 0, len(u.Projects))
	for id, name := range u.Projects {
		copies = append(copies, id+"\n"+name)
	}
	slices.Sort(copies)
	for _, c := range copies {
		field(c)
	}
}

// parsed is what a client's tag names: its hash, its filter, its
// projects.
type parsed struct {
	sum      string
	filter   []byte
	projects []string
}

// parse reads a tag (without its quotes); false: not one of ours.
func parse(t string) (parsed, bool) {
	parts := strings.Split(t, ".")
	if len(parts) != 3 || len(parts[0]) != 22 || len(parts[2])%domain.ULIDLen != 0 ||
		len(parts[2])/domain.ULIDLen > MaxProjects {
		return parsed{}, false
	}
	p := parsed{sum: parts[0]}
	if parts[1] != "" {
		f, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil || len(f) != filterBits/8 {
			return parsed{}, false
		}
		p.filter = f
	}
	for i := 0; i < len(parts[2]); i += domain.ULIDLen {
		id := domain.ProjectIDOf(parts[2][i : i+domain.ULIDLen])
		if _, err := domain.ParseProjectID(id); err != nil {
			return parsed{}, false
		}
		p.projects = append(p.projects, id)
	}
	if !slices.IsSorted(p.projects) {
		return parsed{}, false
	}
	return p, true
}

// filterOf is the filter of users (nil: none).
func filterOf(users []string) []byte {
	if len(users) == 0 {
		return nil
	}
	f := make([]byte, filterBits/8)
	for _, u := range users {
		for _, bit := range bits(u) {
			f[bit/8] |= 1 << (bit % 8)
		}
	}
	return f
}

// mayHold reports whether filter f may hold user u (nil: holds none).
func mayHold(f []byte, u string) bool {
	if f == nil {
		return false
	}
	for _, bit := range bits(u) {
		if f[bit/8]&(1<<(bit%8)) == 0 {
			return false
		}
	}
	return true
}

// bits are user u's three bits of a filter.
func bits(u string) [3]uint {
	s := sha256.Sum256([]byte(u))
	var b [3]uint
	for i := range b {
		b[i] = uint(binary.BigEndian.Uint16(s[2*i:])) % filterBits
	}
	return b
}
