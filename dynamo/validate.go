package dynamo

import (
	"strings"
	"unicode/utf8"
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

// name trims s and checks it has 1..MaxNameLen characters.
func name(field, s string) (string, error) {
	t := strings.TrimSpace(s)
	n := utf8.RuneCountInString(t)
	if !utf8.ValidString(s) || n == 0 || n > MaxNameLen {
		return "", Errorf(EINVALID, "%s must have 1 to %d characters after trimming, not %d", field, MaxNameLen, n)
	}
	return t, nil
}

// text checks an optional long text: trimmed, at most MaxTextLen
// characters; an empty one after trimming clears it.
func text(field string, s *string) (*string, error) {
	if s == nil {
		return nil, nil
	}
	if !utf8.ValidString(*s) {
		return nil, Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	t := strings.TrimSpace(*s)
	if n := utf8.RuneCountInString(t); n > MaxTextLen {
		return nil, Errorf(EINVALID, "%s may have at most %d characters after trimming, not %d", field, MaxTextLen, n)
	}
	if t == "" {
		return nil, nil
	}
	return &t, nil
}

func email(s *string) (*string, error) {
	if s == nil {
		return nil, nil
	}
	e := strings.TrimSpace(*s)
	if e == "" {
		return nil, nil
	}
	if utf8.RuneCountInString(e) > MaxEmailLen || strings.Count(e, "@") != 1 || strings.HasPrefix(e, "@") ||
		strings.HasSuffix(e, "@") || strings.ContainsAny(e, " \t\r\n") {
		return nil, Errorf(EINVALID, "email must be an address of at most %d characters with one '@'", MaxEmailLen)
	}
	return &e, nil
}

// tags normalizes a tag list: trimmed, lower-cased, validated, duplicates
// dropped, in first-seen order; at most MaxTagsOnTask.
func tags(in []string) ([]string, error) {
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
