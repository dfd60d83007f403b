// Package model holds the GraphQL-only types: connections, inputs and the
// Date and Time scalars. The domain types live in package domain.
package model

import (
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
)

// MarshalDate writes a Date as "YYYY-MM-DD".
func MarshalDate(d domain.Date) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(d.String())) })
}

// UnmarshalDate reads a "YYYY-MM-DD" date that exists on the calendar.
func UnmarshalDate(v any) (domain.Date, error) {
	s, ok := v.(string)
	if !ok {
		return domain.Date{}, domain.Errorf(domain.EINVALID, "a Date is a string of the form YYYY-MM-DD, not %T", v)
	}
	return domain.ParseDate(s)
}

// MarshalTime writes an instant in RFC 3339, in UTC.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(t.UTC().Format(time.RFC3339Nano)))
	})
}

// UnmarshalTime reads an RFC 3339 instant.
func UnmarshalTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, domain.Errorf(domain.EINVALID, "a Time is an RFC 3339 string, not %T", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if y := t.UTC().Year(); err != nil || y < 0 || y > 9999 {
		return time.Time{}, domain.Errorf(domain.EINVALID, "%q is not an RFC 3339 time in years 0000-9999 UTC", s)
	}
	return t.UTC(), nil
}

// The built-in scalars and the enums are bound to the functions below
// (gqlgen.yml) rather than to gqlgen's, which read "1" as an Int, 1 as a
// String, "TRUE" as true and an enum name of another case as the empty
// value. The handler checks every input against the schema before a
// resolver runs (graph/pipeline/coercion.go); these check again where the values
// are read.

// MarshalInt writes an Int.
func MarshalInt(n int) graphql.Marshaler { return graphql.MarshalInt(n) }

// UnmarshalInt reads an Int: a number without a fractional part within 32
// bits, not a string.
func UnmarshalInt(v any) (int, error) {
	var n int64
	ok := false
	switch v := v.(type) {
	case int:
		n, ok = int64(v), true
	case int32:
		n, ok = int64(v), true
	case int64:
		n, ok = v, true
	case json.Number:
		var err error
		n, err = v.Int64()
		if f, ferr := v.Float64(); err != nil && ferr == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			n, err = int64(f), nil
		}
		ok = err == nil
	case float64:
		n, ok = int64(v), v == math.Trunc(v) && math.Abs(v) <= 1<<53
	}
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		return 0, domain.Errorf(domain.EINVALID, "an Int is a whole number from %d to %d, not %s", math.MinInt32, math.MaxInt32, ShowInput(v))
	}
	return int(n), nil
}

// MarshalString writes a String.
func MarshalString(s string) graphql.Marshaler { return graphql.MarshalString(s) }

// UnmarshalString reads a String: a string, not a number or a boolean.
func UnmarshalString(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", domain.Errorf(domain.EINVALID, "a String is a string, not %s", ShowInput(v))
	}
	return s, nil
}

// MarshalBoolean writes a Boolean.
func MarshalBoolean(b bool) graphql.Marshaler { return graphql.MarshalBoolean(b) }

// UnmarshalBoolean reads a Boolean: true or false, not a string or a number.
func UnmarshalBoolean(v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, domain.Errorf(domain.EINVALID, "a Boolean is true or false, not %s", ShowInput(v))
	}
	return b, nil
}

// TaskStatuses are the values of the TaskStatus enum.
var TaskStatuses = []domain.TaskStatus{domain.StatusTodo, domain.StatusInProgress, domain.StatusDone}

// MarshalTaskStatus writes a TaskStatus (null for a value it does not have).
func MarshalTaskStatus(s domain.TaskStatus) graphql.Marshaler { return marshalEnum(s, TaskStatuses) }

// UnmarshalTaskStatus reads a TaskStatus: exactly one of its names.
func UnmarshalTaskStatus(v any) (domain.TaskStatus, error) {
	return unmarshalEnum("TaskStatus", v, TaskStatuses)
}

// ProjectRoles are the values of the ProjectRole enum.
var ProjectRoles = []domain.Role{domain.RoleOwner, domain.RoleMember}

// MarshalProjectRole writes a ProjectRole (null for a value it does not have).
func MarshalProjectRole(r domain.Role) graphql.Marshaler { return marshalEnum(r, ProjectRoles) }

// UnmarshalProjectRole reads a ProjectRole: exactly one of its names.
func UnmarshalProjectRole(v any) (domain.Role, error) {
	return unmarshalEnum("ProjectRole", v, ProjectRoles)
}

// marshalEnum writes an enum value whose Go value is its GraphQL name.
func marshalEnum[T ~string](v T, values []T) graphql.Marshaler {
	if !slices.Contains(values, v) {
		return graphql.Null
	}
	return graphql.MarshalString(string(v))
}

// unmarshalEnum reads an enum value: a string equal to one of the names
// (GraphQL enum values are case-sensitive).
func unmarshalEnum[T ~string](enum string, v any, values []T) (T, error) {
	if s, ok := v.(string); ok && slices.Contains(values, T(s)) {
		return T(s), nil
	}
	return "", domain.Errorf(domain.EINVALID, "Value %s does not exist in %q enum", ShowInput(v), enum)
}

// ShowInput writes a value a client sent as JSON for an error message,
// shortened to at most 80 bytes' worth of runes.
func ShowInput(v any) string {
	b, err := json.Marshal(v)
	switch {
	case err != nil:
		return "(not shown)"
	case len(b) > 80:
		return string([]rune(string(b))[:20]) + "…" // 80 bytes are at least 20 runes
	}
	return string(b)
}
