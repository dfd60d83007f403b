package domain

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits of the contract.
const (
	MaxNameLen    = 200    // task title, project name, user name
	MaxTextLen    = 10_000 // description, comment body
	MaxEmailLen   = 254
	MaxTagsOnTask = 20
)

// Opt is an input field that may be left out (Set false), given as a value,
// or, for pointer types, given as null to clear it.
type Opt[T any] struct {
	Set   bool
	Value T
}

// name trims s, normalises it to NFC and checks it: 1..MaxNameLen
// characters on one line, with no control character (newline and tab
// included), line or paragraph separator, or bidi embedding, override or
// isolate control.
func CleanName(field, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	t := norm.NFC.String(strings.TrimSpace(s))
	for _, r := range t {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return "", Errorf(EINVALID, "%s must be one line without control characters", field)
		}
		if bidiControl(r) {
			return "", Errorf(EINVALID, "%s may not contain bidi embedding, override or isolate characters (U+202A-U+202E, U+2066-U+2069)", field)
		}
	}
	n := utf8.RuneCountInString(t)
	if n == 0 || n > MaxNameLen {
		return "", Errorf(EINVALID, "%s must have 1 to %d characters after trimming, not %d", field, MaxNameLen, n)
	}
	return t, nil
}

// bidiControl reports whether r is a bidi embedding, override or isolate
// control (U+202A-U+202E, U+2066-U+2069): one of them left open in a name
// reorders the text that follows it wherever the name is shown.
func bidiControl(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

// text checks an optional long text: trimmed, at most MaxTextLen
// characters, no control characters but tab, newline and CR LF; an empty
// one after trimming clears it.
func CleanText(field string, s *string) (*string, error) {
	if s == nil {
		return nil, nil
	}
	if !utf8.ValidString(*s) {
		return nil, Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	t := strings.TrimSpace(*s)
	for i, r := range t {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && (r != '\r' || !strings.HasPrefix(t[i+1:], "\n")) {
			return nil, Errorf(EINVALID, "%s may not contain control characters other than tab, newline and CR LF", field)
		}
	}
	if n := utf8.RuneCountInString(t); n > MaxTextLen {
		return nil, Errorf(EINVALID, "%s may have at most %d characters after trimming, not %d", field, MaxTextLen, n)
	}
	if t == "" {
		return nil, nil
	}
	return &t, nil
}

func CleanEmail(s *string) (*string, error) {
	if s == nil {
		return nil, nil
	}
	e := strings.TrimSpace(*s)
	if e == "" {
		return nil, nil
	}
	if !utf8.ValidString(e) || utf8.RuneCountInString(e) > MaxEmailLen || strings.Count(e, "@") != 1 || strings.HasPrefix(e, "@") ||
		strings.HasSuffix(e, "@") || strings.ContainsFunc(e, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || bidiControl(r) }) {
		return nil, Errorf(EINVALID, "email must be an address of at most %d characters with one '@'", MaxEmailLen)
	}
	return &e, nil
}

// tags normalizes a tag list: trimmed, lower-cased, validated, duplicates
// dropped, in first-seen order; at most MaxTagsOnTask.
func CleanTags(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for _, t := range in {
		n, err := NormalizeTag(t)
		if err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if len(out) > MaxTagsOnTask {
		return nil, Errorf(EINVALID, "a task may have at most %d tags, not %d", MaxTagsOnTask, len(out))
	}
	return out, nil
}

// NormalizeTag trims and lower-cases a tag and checks it: 1-50 characters of
// a-z, 0-9, '-', '_', '.'. Returns EINVALID.
func NormalizeTag(tag string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(tag))
	if t == "" || len(t) > 50 {
		return "", Errorf(EINVALID, "tag %q must have 1 to 50 characters", Clip(tag))
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return "", Errorf(EINVALID, "tag %q may only contain a-z, 0-9, '-', '_' and '.'", Clip(tag))
		}
	}
	return t, nil
}
