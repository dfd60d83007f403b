package dynamo

import (
	"encoding/base64"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// keyTestNow is the clock of the key and id tests.
var keyTestNow = time.Date(2026, 8, 25, 12, 0, 0, 0, time.UTC)

// freshULIDs returns n ULIDs issued the way the server issues them.
func freshULIDs(t *testing.T, n int) []string {
	t.Helper()
	g := newIDGen()
	out := make([]string, n)
	for i := range out {
		out[i] = g.next(keyTestNow)
	}
	return out
}

func mustDate(t *testing.T, s string) *Date {
	t.Helper()
	d, err := ParseDate(s)
	if err != nil {
		t.Fatalf("ParseDate(%q): %v", s, err)
	}
	return &d
}

// wantCode fails unless err carries the store error code want ("" for nil).
func wantCode(t *testing.T, what string, err error, want string) {
	t.Helper()
	if got := ErrorCode(err); got != want {
		t.Errorf("%s: error code %q (%v), want %q", what, got, err, want)
	}
}

func TestParseIDs(t *testing.T) {
	u := freshULIDs(t, 2)
	tu, cu := u[0], u[1]
	lower := strings.ToLower(tu)
	// A ULID whose first character overflows 128 bits: not canonical.
	overflow := "8" + tu[1:]
	// Crockford's aliases decode, but not to the same string.
	alias := strings.Replace(tu[:25], "0", "O", 1) + tu[25:]
	if alias == tu {
		alias = "O" + tu[1:]
	}

	type parser struct {
		name   string
		prefix string
		parse  func(string) (string, error)
		want   func(id string) string // what the parser returns for a good id
	}
	parsers := []parser{
		{"ParseProjectID", projectIDPrefix, ParseProjectID, func(string) string { return tu }},
		{"ParseTaskID", taskIDPrefix, ParseTaskID, func(string) string { return tu }},
	}
	for _, p := range parsers {
		good := p.prefix + tu
		other := taskIDPrefix
		if p.prefix == taskIDPrefix {
			other = projectIDPrefix
		}
		t.Run(p.name+"/accepts an issued id", func(t *testing.T) {
			got, err := p.parse(good)
			if err != nil || got != tu {
				t.Fatalf("%s(%q) = %q, %v; want %q", p.name, good, got, err, tu)
			}
		})
		bad := map[string]string{
			"empty":                  "",
			"prefix only":            p.prefix,
			"bare ULID":              tu,
			"other type's prefix":    other + tu,
			"comment prefix":         commentIDPrefix + tu,
			"upper-case prefix":      strings.ToUpper(p.prefix) + tu,
			"lower-case ULID":        p.prefix + lower,
			"overflowing ULID":       p.prefix + overflow,
			"Crockford alias":        p.prefix + alias,
			"extra character":        p.prefix + tu + "X",
			"missing character":      p.prefix + tu[:ulidLen-1],
			"hash smuggling":         p.prefix + tu + "#x",
			"hash smuggling ULID":    p.prefix + tu + "#" + cu,
			"doubled prefix":         p.prefix + p.prefix + tu,
			"leading space":          " " + p.prefix + tu,
			"trailing space":         p.prefix + tu + " ",
			"trailing newline":       p.prefix + tu + "\n",
			"percent-encoded prefix": strings.TrimSuffix(p.prefix, "#") + "%23" + tu,
		}
		for name, id := range bad {
			t.Run(p.name+"/rejects "+name, func(t *testing.T) {
				got, err := p.parse(id)
				if err == nil {
					t.Fatalf("%s(%q) = %q, want an error", p.name, id, got)
				}
				wantCode(t, p.name, err, EINVALID)
			})
		}
	}

	good := commentID(tu, cu)
	t.Run("ParseCommentID/accepts an issued id and returns its task's id", func(t *testing.T) {
		got, err := ParseCommentID(good)
		if err != nil || got != taskIDPrefix+tu {
			t.Fatalf("ParseCommentID(%q) = %q, %v; want %q", good, got, err, taskIDPrefix+tu)
		}
		if _, err := ParseTaskID(got); err != nil {
			t.Errorf("the returned task id %q does not parse: %v", got, err)
		}
	})
	badComments := map[string]string{
		"empty":                  "",
		"prefix only":            commentIDPrefix,
		"one ULID":               commentIDPrefix + cu,
		"task prefix":            taskIDPrefix + tu + "#" + cu,
		"project prefix":         projectIDPrefix + tu + "#" + cu,
		"lower-case task ULID":   commentIDPrefix + lower + "#" + cu,
		"lower-case ULID":        commentIDPrefix + tu + "#" + strings.ToLower(cu),
		"overflowing ULID":       commentIDPrefix + tu + "#" + "8" + cu[1:],
		"other separator":        commentIDPrefix + tu + "-" + cu,
		"two separators":         commentIDPrefix + tu + "##" + cu,
		"hash smuggling":         commentIDPrefix + tu + "#" + cu + "#x",
		"extra character":        commentIDPrefix + tu + "#" + cu + "X",
		"task id inside":         commentIDPrefix + taskIDPrefix + tu + "#" + cu,
		"trailing space":         good + " ",
		"missing last character": good[:len(good)-1],
	}
	for name, id := range badComments {
		t.Run("ParseCommentID/rejects "+name, func(t *testing.T) {
			got, err := ParseCommentID(id)
			if err == nil {
				t.Fatalf("ParseCommentID(%q) = %q, want an error", id, got)
			}
			wantCode(t, "ParseCommentID", err, EINVALID)
		})
	}
}

func TestKindOf(t *testing.T) {
	u := freshULIDs(t, 2)
	cases := []struct {
		name string
		id   string
		want Kind
	}{
		{"project id", projectID(u[0]), KindProject},
		{"task id", taskID(u[0]), KindTask},
		{"comment id", commentID(u[0], u[1]), KindComment},
		{"plain user id", "alice", KindUser},
		{"auth0 sub", "auth0|abc123", KindUser},
		{"UUID sub", "9b2f7c1e-3a4d-4e5f-8a6b-7c8d9e0f1a2b", KindUser},
		{"bare ULID is a user id", u[0], KindUser},
		{"prefix-like user id without hash", "prj" + u[0], KindUser},
		{"unicode user id", "Zoë-Ångström", KindUser},
		{"empty", "", KindUnknown},
		{"user id with hash", "a#b", KindUnknown},
		{"user id with space", "a b", KindUnknown},
		{"too long user id", strings.Repeat("x", maxUserIDLen+1), KindUnknown},
		{"project prefix with a bad ULID", projectIDPrefix + "nope", KindUnknown},
		{"task id with a smuggled suffix", taskID(u[0]) + "#x", KindUnknown},
		{"comment id with one ULID", commentIDPrefix + u[0], KindUnknown},
		{"lower-case task id", strings.ToLower(taskID(u[0])), KindUnknown},
		{"unknown prefix", "usr#" + u[0], KindUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := KindOf(c.id); got != c.want {
				t.Errorf("KindOf(%q) = %d, want %d", c.id, got, c.want)
			}
		})
	}
}

func TestValidUserID(t *testing.T) {
	cases := []struct {
		name string
		id   string
		ok   bool
	}{
		{"auth0 sub", "auth0|abc123", true},
		{"UUID", "9b2f7c1e-3a4d-4e5f-8a6b-7c8d9e0f1a2b", true},
		{"one character", "a", true},
		{"128 characters", strings.Repeat("a", 128), true},
		{"128 multi-byte characters", strings.Repeat("é", 128), true},
		{"unicode letters", "Zoë_Ångström_日本", true},
		{"email-like", "user@example.com", true},
		{"google oauth sub", "google-oauth2|1234567890", true},
		{"empty", "", false},
		{"129 characters", strings.Repeat("a", 129), false},
		{"129 multi-byte characters", strings.Repeat("é", 129), false},
		{"hash", "a#b", false},
		{"only a hash", "#", false},
		{"space", "a b", false},
		{"leading space", " a", false},
		{"tab", "a\tb", false},
		{"newline", "a\nb", false},
		{"carriage return", "a\rb", false},
		{"NUL", "a\x00b", false},
		{"escape", "a\x1bb", false},
		{"DEL", "a\x7fb", false},
		{"C1 control", "a\u0085b", false},
		{"no-break space", "a\u00a0b", false},
		{"ideographic space", "a\u3000b", false},
		{"invalid UTF-8", "a\xffb", false},
		// Look-alikes: invisible, bidi and compatibility characters.
		{"zero-width space", "ali\u200bce", false},
		{"zero-width joiner", "ali\u200dce", false},
		{"zero-width non-joiner", "ali\u200cce", false},
		{"word joiner", "alice\u2060", false},
		{"soft hyphen", "ali\u00adce", false},
		{"BOM", "\ufeffalice", false},
		{"left-to-right mark", "alice\u200e", false},
		{"right-to-left override", "\u202eecila", false},
		{"left-to-right embedding", "\u202aalice", false},
		{"first strong isolate", "alice\u2068", false},
		{"tag character", "alice\U000E0041", false},
		{"variation selector", "alice\ufe0f", false},
		{"combining grapheme joiner", "ali\u034fce", false},
		{"Hangul filler", "alice\u3164", false},
		{"private use", "alice\ue000", false},
		{"unassigned", "alice\u0378", false},
		{"unassigned tag-block code point", "alice\U000E0080", false},
		{"noncharacter", "alice\uffff", false},
		{"line separator", "a\u2028b", false},
		{"paragraph separator", "a\u2029b", false},
		{"fullwidth letters", "\uff41\uff4c\uff49\uff43\uff45", false},
		{"fullwidth digit", "user\uff11", false},
		{"ligature fi", "\ufb01sh", false},
		{"superscript two", "user\u00b2", false},
		{"decomposed e acute (NFD)", "Zoe\u0301", false},
		{"Kelvin sign", "\u212a", false},
		// What identity providers issue.
		{"Okta user id", "00u1a2b3c4d5E6F7g8h9", true},
		{"Google numeric id", "110169484474386276334", true},
		{"Cognito UUID", "a1b2c3d4-5678-90ab-cdef-EXAMPLE11111", true},
		{"Azure AD object id", "3f2504e0-4f89-11d3-9a0c-0305e82c3301", true},
		{"Azure AD pairwise sub", "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", true},
		{"base64url sub", "l3_y-Kx9QmW0pZc_aB-9", true},
		{"GitHub via Auth0", "github|583231", true},
		{"SAML via Auth0", "samlp|example-corp|jdoe@example.com", true},
		{"precomposed e acute (NFC)", "Zo\u00eb", true},
		{"emoji", "user-\U0001F600", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidUserID(c.id)
			if (err == nil) != c.ok {
				t.Fatalf("ValidUserID(%q) = %v, want ok=%v", c.id, err, c.ok)
			}
			if !c.ok {
				wantCode(t, "ValidUserID", err, EINVALID)
			}
		})
	}
}

type dueEntry struct {
	due *Date
	id  string
}

// dueLess is the contract's order: due date ascending, no due date last,
// equal dates by id.
func dueLess(a, b dueEntry) int {
	switch {
	case a.due == nil && b.due != nil:
		return 1
	case a.due != nil && b.due == nil:
		return -1
	case a.due != nil && b.due != nil && *a.due != *b.due:
		return strings.Compare(a.due.String(), b.due.String())
	}
	return strings.Compare(a.id, b.id)
}

func TestDueSKOrder(t *testing.T) {
	dates := []*Date{nil, mustDate(t, "2025-12-31"), mustDate(t, "2026-01-01"), mustDate(t, "2026-01-10"),
		mustDate(t, "2026-02-01"), mustDate(t, "2026-10-01"), mustDate(t, "1999-09-09"), mustDate(t, "9999-12-31"),
		mustDate(t, "0001-01-01")}
	ids := freshULIDs(t, 60)
	var entries []dueEntry
	for i, id := range ids {
		entries = append(entries, dueEntry{dates[i%len(dates)], id})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })

	keys := make([]string, len(entries))
	byKey := map[string]dueEntry{}
	for i, e := range entries {
		keys[i] = dueSK(e.due, e.id)
		byKey[keys[i]] = e
	}
	slices.Sort(keys)
	want := slices.Clone(entries)
	slices.SortFunc(want, dueLess)

	t.Run("sorting the keys sorts by due date, no due date last, equal dates by id", func(t *testing.T) {
		for i, k := range keys {
			if got := byKey[k]; got != want[i] {
				t.Fatalf("position %d: key %q, want the key of %v/%s", i, k, want[i].due, want[i].id)
			}
		}
	})
	t.Run("keys without a due date come after every dated key", func(t *testing.T) {
		far := dueSK(mustDate(t, "9999-12-31"), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ")
		none := dueSK(nil, "00000000000000000000000000")
		if none <= far {
			t.Errorf("no-due key %q does not sort after %q", none, far)
		}
	})
	t.Run("dueBefore bounds exactly the earlier dates", func(t *testing.T) {
		d := mustDate(t, "2026-01-10")
		bound := dueBefore(*d)
		for _, k := range keys {
			e := byKey[k]
			earlier := e.due != nil && e.due.String() < d.String()
			if (k < bound) != earlier {
				t.Errorf("key %q < dueBefore(%s) = %v, want %v", k, d, k < bound, earlier)
			}
		}
	})
}

func TestTaskOfDueSK(t *testing.T) {
	ids := freshULIDs(t, 2)
	for _, due := range []*Date{nil, mustDate(t, "2026-08-25"), mustDate(t, "0001-01-01"), mustDate(t, "2024-02-29")} {
		name := "no due date"
		if due != nil {
			name = due.String()
		}
		t.Run("round-trips "+name, func(t *testing.T) {
			got, ok := taskOfDueSK(dueSK(due, ids[0]))
			if !ok || got != ids[0] {
				t.Errorf("taskOfDueSK(dueSK(%v, %s)) = %q, %v", due, ids[0], got, ok)
			}
		})
	}
	u := ids[0]
	bad := map[string]string{
		"empty":             "",
		"prefix only":       duePrefix,
		"no date":           duePrefix + u,
		"empty date":        duePrefix + "#" + u,
		"bad date":          duePrefix + "2026-13-01#" + u,
		"not a date":        duePrefix + "soon#" + u,
		"two tildes":        duePrefix + "~~#" + u,
		"lower-case ULID":   duePrefix + "2026-01-01#" + strings.ToLower(u),
		"short ULID":        duePrefix + "2026-01-01#" + u[1:],
		"no separator":      duePrefix + "2026-01-01-" + u,
		"other prefix":      "PROJECT#2026-01-01#" + u,
		"smuggled segment":  duePrefix + "2026-01-01#x#" + u,
		"trailing hash":     duePrefix + "2026-01-01#" + u + "#",
		"overflowing ULID":  duePrefix + "~#8" + u[1:],
		"two ULIDs":         duePrefix + "~#" + u + "#" + ids[1],
		"date with padding": duePrefix + "2026-1-01#" + u,
	}
	for name, sk := range bad {
		t.Run("rejects "+name, func(t *testing.T) {
			if got, ok := taskOfDueSK(sk); ok {
				t.Errorf("taskOfDueSK(%q) = %q, true; want false", sk, got)
			}
		})
	}
}

func TestCursors(t *testing.T) {
	ids := freshULIDs(t, 2)
	dueKey := dueSK(mustDate(t, "2026-08-25"), ids[0])
	commentKey := commentSK(ids[1])
	raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

	t.Run("round-trips a sort key", func(t *testing.T) {
		for _, c := range []struct {
			sk    string
			valid func(string) bool
		}{{dueKey, validDueCursor}, {dueSK(nil, ids[0]), validDueCursor}, {commentKey, validULIDCursor(commentPrefix)},
			{userProjectsSK(ids[0]), validULIDCursor(projectPrefix)}} {
			got, err := decodeCursor(encodeCursor(c.sk), c.valid)
			if err != nil || got != c.sk {
				t.Errorf("decodeCursor(encodeCursor(%q)) = %q, %v", c.sk, got, err)
			}
		}
	})
	t.Run("the cursor is opaque: no raw key in it", func(t *testing.T) {
		if c := encodeCursor(dueKey); strings.Contains(c, "DUE") || strings.Contains(c, "#") {
			t.Errorf("cursor %q shows the key", c)
		}
	})
	bad := []struct {
		name   string
		cursor string
		valid  func(string) bool
	}{
		{"empty", "", validDueCursor},
		{"garbage", "not a cursor!", validDueCursor},
		{"padded base64", base64.URLEncoding.EncodeToString([]byte(cursorVersion + "DUE#2026-08-25#" + ids[0])), validDueCursor},
		{"standard base64 alphabet", base64.StdEncoding.EncodeToString([]byte(cursorVersion + dueKey + "\xfb\xff")), validDueCursor},
		{"no version", raw(dueKey), validDueCursor},
		{"other version", raw("c2:" + dueKey), validDueCursor},
		{"version only", raw(cursorVersion), validDueCursor},
		{"raw sort key", dueKey, validDueCursor},
		{"comment cursor on a due-date list", encodeCursor(commentKey), validDueCursor},
		{"due-date cursor on a comment list", encodeCursor(dueKey), validULIDCursor(commentPrefix)},
		{"project cursor on a comment list", encodeCursor(userProjectsSK(ids[0])), validULIDCursor(commentPrefix)},
		{"bad date in the key", encodeCursor(duePrefix + "2026-13-01#" + ids[0]), validDueCursor},
		{"lower-case ULID in the key", encodeCursor(commentPrefix + strings.ToLower(ids[1])), validULIDCursor(commentPrefix)},
		{"smuggled partition", encodeCursor(commentKey + "#" + taskPK(ids[0])), validULIDCursor(commentPrefix)},
		{"range end", encodeCursor(duePrefix + rangeEnd), validDueCursor},
		{"prefix only", encodeCursor(commentPrefix), validULIDCursor(commentPrefix)},
	}
	for _, c := range bad {
		t.Run("rejects "+c.name, func(t *testing.T) {
			got, err := decodeCursor(c.cursor, c.valid)
			if err == nil {
				t.Fatalf("decodeCursor(%q) = %q, want an error", c.cursor, got)
			}
			wantCode(t, "decodeCursor", err, EINVALID)
		})
	}
}

func TestNormalizeTag(t *testing.T) {
	cases := []struct {
		in, want string // want "" means refused
	}{
		{"urgent", "urgent"},
		{"  Urgent\t", "urgent"},
		{"\nBUG ", "bug"},
		{"a.b-c_d", "a.b-c_d"},
		{"v1.2.3", "v1.2.3"},
		{"0", "0"},
		{strings.Repeat("x", 50), strings.Repeat("x", 50)},
		{strings.Repeat("X", 50), strings.Repeat("x", 50)},
		{"  " + strings.Repeat("y", 50) + "  ", strings.Repeat("y", 50)},
		{"", ""},
		{"   ", ""},
		{strings.Repeat("x", 51), ""},
		{"two words", ""},
		{"tag#x", ""},
		{"tag/x", ""},
		{"tag:x", ""},
		{"tag,x", ""},
		{"tag~", ""},
		{"é", ""},
		{"日本", ""},
		{"emoji😀", ""},
		{"tab\tinside", ""},
		{"nul\x00", ""},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.in, "/", "slash"), func(t *testing.T) {
			got, err := NormalizeTag(c.in)
			if c.want == "" {
				if err == nil {
					t.Fatalf("NormalizeTag(%q) = %q, want an error", c.in, got)
				}
				wantCode(t, "NormalizeTag", err, EINVALID)
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("NormalizeTag(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
}

func TestIDGenStrictlyIncreases(t *testing.T) {
	base := keyTestNow
	clocks := []struct {
		name string
		at   func(i int) time.Time
	}{
		{"same millisecond", func(int) time.Time { return base }},
		{"same millisecond, nanoseconds apart", func(i int) time.Time { return base.Add(time.Duration(i)) }},
		{"clock steps back every time", func(i int) time.Time { return base.Add(-time.Duration(i) * time.Millisecond) }},
		{"clock jumps back once", func(i int) time.Time {
			if i < 500 {
				return base.Add(time.Duration(i) * time.Millisecond)
			}
			return base.Add(-time.Hour)
		}},
		{"clock jitters", func(i int) time.Time { return base.Add(time.Duration(i%7-3) * time.Millisecond) }},
	}
	for _, c := range clocks {
		t.Run(c.name, func(t *testing.T) {
			g := newIDGen()
			prev := ""
			for i := range 1000 {
				id := g.next(c.at(i))
				if _, ok := parseULID(id); !ok {
					t.Fatalf("id %d %q is not a canonical ULID", i, id)
				}
				if id <= prev {
					t.Fatalf("id %d %q does not sort after %q", i, id, prev)
				}
				prev = id
			}
		})
	}
	t.Run("issued ids parse as ids of every type", func(t *testing.T) {
		g := newIDGen()
		a, b := g.next(base), g.next(base)
		if _, err := ParseProjectID(projectID(a)); err != nil {
			t.Error(err)
		}
		if _, err := ParseTaskID(taskID(a)); err != nil {
			t.Error(err)
		}
		if _, err := ParseCommentID(commentID(a, b)); err != nil {
			t.Error(err)
		}
	})
}
