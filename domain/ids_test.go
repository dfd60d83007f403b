package domain

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// freshULIDs returns n new ULIDs in increasing order.
func freshULIDs(t *testing.T, n int) []string {
	t.Helper()
	entropy := ulid.Monotonic(rand.Reader, 0)
	ms := ulid.Timestamp(time.Date(2026, 8, 25, 12, 0, 0, 0, time.UTC))
	out := make([]string, n)
	for i := range out {
		out[i] = ulid.MustNew(ms, entropy).String()
	}
	return out
}

// wantCode fails unless err carries the error code want ("" for nil).
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
			"missing character":      p.prefix + tu[:ULIDLen-1],
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

	good := CommentIDOf(tu, cu)
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

func TestParseTagID(t *testing.T) {
	for _, name := range []string{"urgent", "a", "v1.2", "front-end_x", strings.Repeat("z", 50)} {
		t.Run("accepts tag#"+name, func(t *testing.T) {
			id := TagIDOf(name)
			got, err := ParseTagID(id)
			if err != nil || got != name {
				t.Fatalf("ParseTagID(%q) = %q, %v; want %q", id, got, err, name)
			}
			if KindOf(id) != KindTag {
				t.Errorf("KindOf(%q) = %d, want KindTag", id, KindOf(id))
			}
			if (&Tag{Name: name}).ID() != id {
				t.Errorf("Tag{%q}.ID() = %q, want %q", name, (&Tag{Name: name}).ID(), id)
			}
		})
	}
	bad := map[string]string{
		"empty":                  "",
		"prefix only":            "tag#",
		"bare name":              "urgent",
		"upper-case name":        "tag#Urgent",
		"upper-case prefix":      "TAG#urgent",
		"leading space in name":  "tag# urgent",
		"trailing space":         "tag#urgent ",
		"trailing newline":       "tag#urgent\n",
		"hash in the name":       "tag#urg#ent",
		"doubled prefix":         "tag#tag#urgent",
		"a character no tag has": "tag#urgent!",
		"51 characters":          "tag#" + strings.Repeat("z", 51),
		"percent-encoded":        "tag%23urgent",
		"other type's prefix":    "prj#urgent",
	}
	for name, id := range bad {
		t.Run("rejects "+name, func(t *testing.T) {
			got, err := ParseTagID(id)
			if err == nil {
				t.Fatalf("ParseTagID(%q) = %q, want an error", id, got)
			}
			wantCode(t, "ParseTagID", err, EINVALID)
			if KindOf(id) == KindTag {
				t.Errorf("KindOf(%q) = KindTag", id)
			}
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
		{"project id", ProjectIDOf(u[0]), KindProject},
		{"task id", TaskIDOf(u[0]), KindTask},
		{"comment id", CommentIDOf(u[0], u[1]), KindComment},
		{"tag id", TagIDOf("urgent"), KindTag},
		{"tag id with an upper-case name", "tag#Urgent", KindUnknown},
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
		{"task id with a smuggled suffix", TaskIDOf(u[0]) + "#x", KindUnknown},
		{"comment id with one ULID", commentIDPrefix + u[0], KindUnknown},
		{"lower-case task id", strings.ToLower(TaskIDOf(u[0])), KindUnknown},
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
