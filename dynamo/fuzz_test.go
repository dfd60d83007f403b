package dynamo

import (
	"encoding/base64"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
	"golang.org/x/text/unicode/norm"
)

// Fuzz tests of the parsers that stand between client input and keys: ids,
// cursors, dates and tags. Each runs its seed corpus under plain `go test`;
// `go test -run '^$' -fuzz FuzzParseIDs` explores further.

// fzULIDs are canonical ULIDs of the kind the server issues, plus edge cases.
var fzULIDs = []string{
	"01ARZ3NDEKTSV4RRFFQ69G5FAV",
	"01J6QZ8Z5V8WJ6S0XQ7B1YQ2K3",
	"00000000000000000000000000",
	"7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
}

// fzHasSpace reports whether s holds a white-space rune (Unicode White_Space
// or what unicode.IsSpace admits) or a control character.
func fzHasSpace(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.In(r, unicode.White_Space) || unicode.IsControl(r) {
			return true
		}
	}
	return false
}

func FuzzParseIDs(f *testing.F) {
	u, v := fzULIDs[0], fzULIDs[1]
	for _, s := range []string{
		"", "#", "prj#", "tsk#", "cmt#", "prj#" + u, "tsk#" + u, "cmt#" + u + "#" + v, "cmt#" + u, "cmt#" + u + "#",
		"cmt#" + u + "#" + v + "#", "prj#" + strings.ToLower(u), "PRJ#" + u, "prj#" + u + " ", " prj#" + u,
		"prj#" + u + "\n", "prj#8" + u[1:], "prj#O" + u[1:], "prj#" + u + u, "tsk#prj#" + u, "prj#tsk#" + u,
		"alice", "auth0|abc123", "0b5c3e1a-8f0e-4b8e-9a9e-4f6c1a2b3c4d", "a b", "a\tb", "a\u00a0b", "a\u2028b",
		"a\u0085b", "\x00", "\xff", "é", strings.Repeat("x", 128), strings.Repeat("x", 129), strings.Repeat("é", 128),
		"ali\u200bce", "\ufeffalice", "\u202eecila", "\uff41lice", "Zoe\u0301", "Zo\u00eb", "alice\ue000", "alice\u0378",
		"tag#urgent", "tag#", "tag#Urgent", "tag#a#b", "tag# x", "tag#" + strings.Repeat("x", 51),
		"USER#alice", "prj#" + fzULIDs[2], "tsk#" + fzULIDs[3], "cmt#" + fzULIDs[2] + "#" + fzULIDs[3],
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		kind := domain.KindOf(id)

		pu, perr := domain.ParseProjectID(id)
		if perr == nil {
			if got := domain.ProjectIDOf(pu); got != id {
				t.Errorf("ParseProjectID(%q) = %q, which rebuilds to %q", id, pu, got)
			}
			if _, ok := domain.ParseULID(pu); !ok {
				t.Errorf("ParseProjectID(%q) = %q, not a canonical ULID", id, pu)
			}
			if kind != domain.KindProject {
				t.Errorf("KindOf(%q) = %v, but ParseProjectID accepts it", id, kind)
			}
		} else if kind == domain.KindProject {
			t.Errorf("KindOf(%q) = KindProject, but ParseProjectID refuses it: %v", id, perr)
		}
		if perr != nil && domain.ErrorCode(perr) != domain.EINVALID {
			t.Errorf("ParseProjectID(%q) error code %q, want %q", id, domain.ErrorCode(perr), domain.EINVALID)
		}

		tu, terr := domain.ParseTaskID(id)
		if terr == nil {
			if got := domain.TaskIDOf(tu); got != id {
				t.Errorf("ParseTaskID(%q) = %q, which rebuilds to %q", id, tu, got)
			}
			if _, ok := domain.ParseULID(tu); !ok {
				t.Errorf("ParseTaskID(%q) = %q, not a canonical ULID", id, tu)
			}
			if kind != domain.KindTask {
				t.Errorf("KindOf(%q) = %v, but ParseTaskID accepts it", id, kind)
			}
		} else if kind == domain.KindTask {
			t.Errorf("KindOf(%q) = KindTask, but ParseTaskID refuses it: %v", id, terr)
		}
		if terr != nil && domain.ErrorCode(terr) != domain.EINVALID {
			t.Errorf("ParseTaskID(%q) error code %q, want %q", id, domain.ErrorCode(terr), domain.EINVALID)
		}

		taskOf, cerr := domain.ParseCommentID(id)
		ct, cc, cerr2 := domain.SplitCommentID(id)
		if (cerr == nil) != (cerr2 == nil) {
			t.Errorf("ParseCommentID(%q) and parseCommentID disagree: %v vs %v", id, cerr, cerr2)
		}
		if cerr == nil {
			if got := domain.CommentIDOf(ct, cc); got != id {
				t.Errorf("parseCommentID(%q) = %q, %q, which rebuilds to %q", id, ct, cc, got)
			}
			if taskOf != domain.TaskIDOf(ct) {
				t.Errorf("ParseCommentID(%q) = %q, want the task id %q", id, taskOf, domain.TaskIDOf(ct))
			}
			if tu2, err := domain.ParseTaskID(taskOf); err != nil || tu2 != ct {
				t.Errorf("ParseCommentID(%q) = %q, which ParseTaskID reads as %q, %v", id, taskOf, tu2, err)
			}
			if kind != domain.KindComment {
				t.Errorf("KindOf(%q) = %v, but ParseCommentID accepts it", id, kind)
			}
		} else {
			if kind == domain.KindComment {
				t.Errorf("KindOf(%q) = KindComment, but ParseCommentID refuses it: %v", id, cerr)
			}
			if domain.ErrorCode(cerr) != domain.EINVALID {
				t.Errorf("ParseCommentID(%q) error code %q, want %q", id, domain.ErrorCode(cerr), domain.EINVALID)
			}
		}

		name, gerr := domain.ParseTagID(id)
		if gerr == nil {
			if got := domain.TagIDOf(name); got != id {
				t.Errorf("ParseTagID(%q) = %q, which rebuilds to %q", id, name, got)
			}
			if n, err := domain.NormalizeTag(name); err != nil || n != name {
				t.Errorf("ParseTagID(%q) = %q, which NormalizeTag makes %q, %v", id, name, n, err)
			}
			if kind != domain.KindTag {
				t.Errorf("KindOf(%q) = %v, but ParseTagID accepts it", id, kind)
			}
		} else if kind == domain.KindTag {
			t.Errorf("KindOf(%q) = KindTag, but ParseTagID refuses it: %v", id, gerr)
		}

		uerr := domain.ValidUserID(id)
		if uerr == nil {
			if kind != domain.KindUser {
				t.Errorf("KindOf(%q) = %v, but ValidUserID accepts it", id, kind)
			}
			if n := utf8.RuneCountInString(id); n < 1 || n > 128 || !utf8.ValidString(id) {
				t.Errorf("ValidUserID accepts %q of %d characters", id, n)
			}
			if strings.Contains(id, "#") {
				t.Errorf("ValidUserID accepts %q with a '#'", id)
			}
			if !norm.NFKC.IsNormalString(id) || strings.ContainsFunc(id, func(r rune) bool { return unicode.In(r, unicode.Cf, unicode.Co) }) {
				t.Errorf("ValidUserID accepts %q, which is not NFKC or holds a format or private-use character", id)
			}
		} else {
			if kind == domain.KindUser {
				t.Errorf("KindOf(%q) = KindUser, but ValidUserID refuses it: %v", id, uerr)
			}
			if domain.ErrorCode(uerr) != domain.EINVALID {
				t.Errorf("ValidUserID(%q) error code %q, want %q", id, domain.ErrorCode(uerr), domain.EINVALID)
			}
		}

		accepted := perr == nil || terr == nil || cerr == nil || gerr == nil || uerr == nil
		if accepted && fzHasSpace(id) {
			t.Errorf("an id with white space or a control character is accepted: %q (kind %v)", id, kind)
		}
		if accepted && id == "" {
			t.Error("the empty id is accepted")
		}
		n := 0
		for _, err := range []error{perr, terr, cerr, gerr, uerr} {
			if err == nil {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%q is accepted as %d kinds of id", id, n)
		}
		if n == 0 && kind != domain.KindUnknown {
			t.Errorf("KindOf(%q) = %v, but every parser refuses it", id, kind)
		}
	})
}

// fzCursorList is a list's cursor validator and the shape of its sort keys.
type fzCursorList struct {
	name  string
	valid func(string) bool
	shape *regexp.Regexp
}

var fzCursorLists = []fzCursorList{
	{"due date", validDueCursor, regexp.MustCompile(`^DUE#(~|[0-9]{4}-[0-9]{2}-[0-9]{2})#[0-7][0-9A-HJKMNP-TV-Z]{25}$`)},
	{"project", validULIDCursor(projectPrefix), regexp.MustCompile(`^PROJECT#[0-7][0-9A-HJKMNP-TV-Z]{25}$`)},
	{"comment", validULIDCursor(commentPrefix), regexp.MustCompile(`^COMMENT#[0-7][0-9A-HJKMNP-TV-Z]{25}$`)},
}

func FuzzDecodeCursor(f *testing.F) {
	u := fzULIDs[0]
	d := mustFzDate("2026-08-25")
	keys := []string{dueSK(&d, u), dueSK(nil, u), userProjectsSK(u), commentSK(u), duePrefix + "2026-02-30#" + u,
		duePrefix + rangeEnd, commentPrefix, commentSK(u) + "#" + taskPK(u), duePrefix + "~#" + strings.ToLower(u)}
	for _, k := range keys {
		f.Add(cursor.List(k))
		f.Add(base64.URLEncoding.EncodeToString([]byte("c1:" + k)))
		f.Add(base64.RawStdEncoding.EncodeToString([]byte("c1:" + k)))
		f.Add(base64.RawURLEncoding.EncodeToString([]byte(k)))
		f.Add(k)
	}
	for _, s := range []string{"", "=", "YzE6", "not a cursor!", "\x00", "~~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		for _, l := range fzCursorLists {
			sk, err := cursor.OpenList(c, l.valid)
			if err != nil {
				if domain.ErrorCode(err) != domain.EINVALID {
					t.Errorf("%s list: cursor.OpenList(%q) error code %q, want %q", l.name, c, domain.ErrorCode(err), domain.EINVALID)
				}
				if sk != "" {
					t.Errorf("%s list: cursor.OpenList(%q) refused the cursor but returned %q", l.name, c, sk)
				}
				continue
			}
			if got := cursor.List(sk); got != c {
				t.Errorf("%s list: cursor.OpenList(%q) = %q, which encodes to %q: the cursor is not canonical", l.name, c, sk, got)
			}
			if !l.shape.MatchString(sk) {
				t.Errorf("%s list: cursor.OpenList(%q) = %q, not the shape of the list's sort keys", l.name, c, sk)
			}
			if l.name == "due date" {
				tu, ok := taskOfDueSK(sk)
				if !ok || !strings.HasSuffix(sk, "#"+tu) {
					t.Errorf("due-date cursor %q: taskOfDueSK = %q, %v", sk, tu, ok)
				}
				if date := sk[len(duePrefix) : len(sk)-domain.ULIDLen-1]; date != noDue {
					if dd, err := domain.ParseDate(date); err != nil || dd.String() != date {
						t.Errorf("due-date cursor %q carries the date %q, which is no calendar date", sk, date)
					}
				}
			}
			// The sort key lies in the list's range, so a read cannot leave it.
			lo, hi := duePrefix, duePrefix+rangeEnd
			switch l.name {
			case "project":
				lo, hi = projectPrefix, projectPrefix+rangeEnd
			case "comment":
				lo, hi = commentPrefix, commentPrefix+rangeEnd
			}
			if sk <= lo || sk >= hi {
				t.Errorf("%s list: cursor sort key %q lies outside (%q, %q)", l.name, sk, lo, hi)
			}
		}
	})
}

func mustFzDate(s string) domain.Date {
	d, err := domain.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-08-25", "2024-02-29", "2023-02-29", "2026-02-30", "2026-13-01", "2026-00-10",
		"2026-01-00", "0000-01-01", "9999-12-31", "0000-02-29", "1900-02-29", "2000-02-29", "2026-8-25", "26-08-25",
		"2026-08-25T00:00:00Z", " 2026-08-25", "2026-08-25 ", "+026-08-25", "-026-08-25", "2026/08/25", "", "2026-08-2x",
		"２０２６-08-25", "2026-08-025", "20260-8-25"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := domain.ParseDate(s)
		if err != nil {
			if domain.ErrorCode(err) != domain.EINVALID {
				t.Errorf("ParseDate(%q) error code %q, want %q", s, domain.ErrorCode(err), domain.EINVALID)
			}
			return
		}
		if got := d.String(); got != s {
			t.Errorf("ParseDate(%q) formats back as %q", s, got)
		}
		if len(s) != 10 || s[4] != '-' || s[7] != '-' {
			t.Fatalf("ParseDate accepts %q, not of the form YYYY-MM-DD", s)
		}
		for i, r := range s {
			if i != 4 && i != 7 && (r < '0' || r > '9') {
				t.Fatalf("ParseDate accepts %q with a non-digit", s)
			}
		}
		y, _ := strconv.Atoi(s[:4])
		m, _ := strconv.Atoi(s[5:7])
		day, _ := strconv.Atoi(s[8:])
		if m < 1 || m > 12 {
			t.Fatalf("ParseDate accepts %q with month %d", s, m)
		}
		days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
		if m == 2 && (y%4 == 0 && y%100 != 0 || y%400 == 0) {
			days = 29
		}
		if day < 1 || day > days {
			t.Errorf("ParseDate accepts %q: %d-%02d has %d days", s, y, m, days)
		}
		if again := domain.DateOf(time.Date(y, time.Month(m), day, 13, 0, 0, 0, time.UTC)); again != d {
			t.Errorf("ParseDate(%q) = %v, DateOf of that day = %v", s, d, again)
		}
		if next := d.AddDays(1).AddDays(-1); next != d {
			t.Errorf("ParseDate(%q) +1-1 day = %v", s, next)
		}
	})
}

var fzTagShape = regexp.MustCompile(`^[a-z0-9._-]{1,50}$`)

func FuzzNormalizeTag(f *testing.F) {
	for _, s := range []string{"urgent", "  Urgent\t", "BUG", "a.b-c_d", "v1.2.3", strings.Repeat("x", 50),
		strings.Repeat("x", 51), " " + strings.Repeat("Y", 50) + " ", "", "   ", "two words", "tag#x", "é", "\u212a",
		"\u0130", "ǅ", "ß", "\u00a0tag\u00a0", "\u2028tag", "tag\x00", "\xff", "ＡＢＣ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := domain.NormalizeTag(s)
		if err != nil {
			if domain.ErrorCode(err) != domain.EINVALID {
				t.Errorf("NormalizeTag(%q) error code %q, want %q", s, domain.ErrorCode(err), domain.EINVALID)
			}
			return
		}
		if !fzTagShape.MatchString(n) {
			t.Errorf("NormalizeTag(%q) = %q, which is not 1-50 of [a-z0-9._-]", s, n)
		}
		if again, err := domain.NormalizeTag(n); err != nil || again != n {
			t.Errorf("NormalizeTag is not idempotent: %q -> %q -> %q, %v", s, n, again, err)
		}
		if want := strings.ToLower(strings.TrimSpace(s)); want != n {
			t.Errorf("NormalizeTag(%q) = %q, want the trimmed, lower-cased %q", s, n, want)
		}
		// The tag reaches keys: it must not break them.
		if strings.ContainsAny(n, "#~") {
			t.Errorf("NormalizeTag(%q) = %q holds a key separator", s, n)
		}
	})
}
