// Package model holds the GraphQL-only types: connections, inputs and the
// Date and Time scalars. The domain types live in package dynamo.
package model

import (
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/dynamo"
)

// MarshalDate writes a Date as "YYYY-MM-DD".
func MarshalDate(d dynamo.Date) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(d.String())) })
}

// UnmarshalDate reads a "YYYY-MM-DD" date that exists on the calendar.
func UnmarshalDate(v any) (dynamo.Date, error) {
	s, ok := v.(string)
	if !ok {
		return dynamo.Date{}, dynamo.Errorf(dynamo.EINVALID, "a Date is a string of the form YYYY-MM-DD, not %T", v)
	}
	return dynamo.ParseDate(s)
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
		return time.Time{}, dynamo.Errorf(dynamo.EINVALID, "a Time is an RFC 3339 string, not %T", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if y := t.UTC().Year(); err != nil || y < 0 || y > 9999 {
		return time.Time{}, dynamo.Errorf(dynamo.EINVALID, "%q is not an RFC 3339 time in years 0000-9999 UTC", s)
	}
	return t.UTC(), nil
}
