package testenv

import (
	"encoding/json"
	"strings"

	"github.com/taskgraph/taskgraph/domain"
)

// Day returns the date n days after Now (n may be negative), as YYYY-MM-DD.
func Day(n int) string { return DayPtr(n).String() }

// DayPtr returns the date n days after Now (n may be negative).
func DayPtr(n int) *domain.Date {
	d := domain.DateOf(Now).AddDays(n)
	return &d
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// Deref returns *p, or T's zero value when p is nil.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// DerefOr returns *p, or none when p is nil; DerefOr(email, "none") tells a
// missing value from an empty one.
func DerefOr[T any](p *T, none T) T {
	if p == nil {
		return none
	}
	return *p
}

// ULIDOf returns the ULID at the end of a server-issued id (prj#…, tsk#…,
// cmt#…#…).
func ULIDOf(id string) string { return id[strings.LastIndexByte(id, '#')+1:] }

// JSON returns v as JSON, for messages ("" when v does not marshal).
func JSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ShortJSON is JSON cut to its first 400 bytes, an ellipsis marking a cut.
func ShortJSON(v any) string {
	s := JSON(v)
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

// NullData reports whether a response's data is absent, null, or an object
// whose every field is null: what a refused request returns.
func NullData(data json.RawMessage) bool {
	if len(data) == 0 || string(data) == "null" {
		return true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return false
	}
	for _, v := range m {
		if string(v) != "null" {
			return false
		}
	}
	return true
}
