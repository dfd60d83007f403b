package domain

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"
	"golang.org/x/text/unicode/norm"
)

// Server-issued ids are a type prefix, '#', and a ULID (a comment's id also
// carries its task's ULID, so its key can be derived from the id alone). The
// '#' keeps them apart from user ids (token subs may not contain '#'); the
// ULIDs make them sort in creation order. Only the ULIDs ever reach a key.
// A tag's id is "tag#" and its name: a tag is its name, the same for every
// viewer, and a name (a-z, 0-9, '-', '_', '.') needs no encoding.
const (
	projectIDPrefix = "prj#"
	taskIDPrefix    = "tsk#"
	commentIDPrefix = "cmt#"
	tagIDPrefix     = "tag#"
	ULIDLen         = 26
	maxUserIDLen    = 128
)

// Kind names the type of object an id refers to.
type Kind int

// The kinds of object an id may name.
const (
	KindUnknown Kind = iota
	KindUser
	KindProject
	KindTask
	KindComment
	KindTag
)

// KindOf tells which type of object id names, from its form alone; it returns
// KindUnknown for a string no object could have as its id.
func KindOf(id string) Kind {
	switch {
	case strings.HasPrefix(id, projectIDPrefix):
		if _, err := ParseProjectID(id); err == nil {
			return KindProject
		}
	case strings.HasPrefix(id, taskIDPrefix):
		if _, err := ParseTaskID(id); err == nil {
			return KindTask
		}
	case strings.HasPrefix(id, commentIDPrefix):
		if _, _, err := SplitCommentID(id); err == nil {
			return KindComment
		}
	case strings.HasPrefix(id, tagIDPrefix):
		if _, err := ParseTagID(id); err == nil {
			return KindTag
		}
	default:
		if ValidUserID(id) == nil {
			return KindUser
		}
	}
	return KindUnknown
}

// ValidUserID checks a user id (a token's sub): 1-128 characters, none of
// them '#', white space, a control, format (bidi controls, zero-width
// characters, BOM), private-use, surrogate, unassigned or otherwise
// default-ignorable code point, and unchanged by NFKC normalisation (no
// fullwidth or other compatibility forms), so that no two accepted ids
// render alike by invisible or compatibility characters. Returns EINVALID.
func ValidUserID(id string) error {
	if id == "" || !utf8.ValidString(id) || utf8.RuneCountInString(id) > maxUserIDLen {
		return Errorf(EINVALID, "a user id has 1 to %d characters", maxUserIDLen)
	}
	for _, r := range id {
		if r == '#' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return Errorf(EINVALID, "a user id may not contain '#', white space or control characters")
		}
		if invisible(r) {
			return Errorf(EINVALID, "a user id may not contain format, private-use, unassigned or invisible characters")
		}
	}
	if !norm.NFKC.IsNormalString(id) {
		return Errorf(EINVALID, "a user id must be in Unicode normalisation form NFKC (no fullwidth or compatibility characters)")
	}
	return nil
}

// invisible reports whether r is a character a user id may not hold although
// it is no white space or control character: a format character (Cf: bidi
// controls, zero-width characters, the BOM, tags), a private-use (Co),
// surrogate (Cs) or unassigned (Cn, noncharacters included) code point, a
// line or paragraph separator, a variation selector or another
// default-ignorable code point (Hangul fillers, the combining grapheme
// joiner).
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp, unicode.Variation_Selector,
		unicode.Other_Default_Ignorable_Code_Point) ||
		!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs) // Cn: unassigned
}

func ParseULID(s string) (string, bool) {
	if len(s) != ULIDLen {
		return "", false
	}
	u, err := ulid.ParseStrict(s)
	if err != nil {
		return "", false
	}
	return u.String(), u.String() == s
}

// ParseProjectID returns the ULID inside a project id. Returns EINVALID.
func ParseProjectID(id string) (string, error) {
	if u, ok := ParseULID(strings.TrimPrefix(id, projectIDPrefix)); ok && strings.HasPrefix(id, projectIDPrefix) {
		return u, nil
	}
	return "", Errorf(EINVALID, "%q is not a project id", Clip(id))
}

// ParseTaskID returns the ULID inside a task id. Returns EINVALID.
func ParseTaskID(id string) (string, error) {
	if u, ok := ParseULID(strings.TrimPrefix(id, taskIDPrefix)); ok && strings.HasPrefix(id, taskIDPrefix) {
		return u, nil
	}
	return "", Errorf(EINVALID, "%q is not a task id", Clip(id))
}

// parseCommentID returns the task and comment ULIDs inside a comment id.
func SplitCommentID(id string) (task, comment string, err error) {
	rest, ok := strings.CutPrefix(id, commentIDPrefix)
	if ok && len(rest) == 2*ULIDLen+1 && rest[ULIDLen] == '#' {
		t, ok1 := ParseULID(rest[:ULIDLen])
		c, ok2 := ParseULID(rest[ULIDLen+1:])
		if ok1 && ok2 {
			return t, c, nil
		}
	}
	return "", "", Errorf(EINVALID, "%q is not a comment id", Clip(id))
}

// ParseCommentID checks a comment id and returns the id of its task.
// Returns EINVALID.
func ParseCommentID(id string) (taskID string, err error) {
	t, _, err := SplitCommentID(id)
	if err != nil {
		return "", err
	}
	return taskIDPrefix + t, nil
}

// ParseTagID returns the tag name inside a tag id: "tag#" and a name as
// NormalizeTag leaves it (lower case, no space), nothing else. Returns
// EINVALID.
func ParseTagID(id string) (string, error) {
	if name, ok := strings.CutPrefix(id, tagIDPrefix); ok {
		if n, err := NormalizeTag(name); err == nil && n == name {
			return name, nil
		}
	}
	return "", Errorf(EINVALID, "%q is not a tag id", Clip(id))
}

// TagIDOf returns the id of the tag with the (normalized) name.
func TagIDOf(name string) string { return tagIDPrefix + name }

func ProjectIDOf(u string) string       { return projectIDPrefix + u }
func TaskIDOf(u string) string          { return taskIDPrefix + u }
func CommentIDOf(task, c string) string { return commentIDPrefix + task + "#" + c }

// clip shortens s for an error message.
func Clip(s string) string {
	if utf8.RuneCountInString(s) <= 64 {
		return s
	}
	r := []rune(s)
	return string(r[:64]) + "…"
}
