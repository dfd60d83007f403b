package domain

import (
	"time"
)

// Date is a calendar date. Its string form, YYYY-MM-DD, sorts like the date.
type Date struct {
	t time.Time // midnight UTC
}

// ParseDate reads a YYYY-MM-DD date that exists on the calendar. Returns EINVALID.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || len(s) != len(time.DateOnly) {
		return Date{}, Errorf(EINVALID, "%q is not a date of the form YYYY-MM-DD", Clip(s))
	}
	return Date{t: t}, nil
}

// DateOf returns the UTC calendar date of t.
func DateOf(t time.Time) Date {
	y, m, d := t.UTC().Date()
	return Date{t: time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
}

// String returns the date as YYYY-MM-DD.
func (d Date) String() string { return d.t.Format(time.DateOnly) }

// AddDays returns the date n days later (earlier for negative n).
func (d Date) AddDays(n int) Date { return Date{t: d.t.AddDate(0, 0, n)} }
