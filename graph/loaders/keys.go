package loaders

import (
	"encoding/json"

	"github.com/taskgraph/taskgraph/domain"
)

// Loader keys: a page of a list is one key, built from the list field's
// arguments by the functions below, both when a resolver asks (with
// gqlgen's typed arguments) and when prefetch looks ahead (with the raw
// arguments, decoded by listArgsOf): the two then share one read.

// DefaultFirst is a connection's page size when `first` is null. Its range
// is checked by the store.
const DefaultFirst = 20

// firstOr returns a connection's page size: first, or DefaultFirst when null.
func firstOr(first *int) int {
	if first == nil {
		return DefaultFirst
	}
	return *first
}

// PageSize returns the size of the page a connection field asks for: last
// when given, else first (or its default).
func PageSize(first, last *int) int {
	if last != nil {
		return *last
	}
	return firstOr(first)
}

// pageKey identifies one page of a list owned by id (a user, task or tag).
// A backward page (last given) has first 0.
type pageKey struct {
	id                  string
	first, last         int
	after, before       string
	hasLast             bool // last given
	hasAfter, hasBefore bool // after, before given
}

func (k pageKey) page() domain.Page {
	p := domain.Page{First: k.first}
	if k.hasLast {
		p.Last = &k.last
	}
	if k.hasAfter {
		p.After = &k.after
	}
	if k.hasBefore {
		p.Before = &k.before
	}
	return p
}

// pageArgs are a connection field's page arguments.
type pageArgs struct {
	first  *int
	after  *string
	last   *int
	before *string
}

// pageKeyOf is the key of the page that a's arguments ask for. With last
// given, first is the schema's default (first together with last is
// refused before the operation runs: pageArguments), so the page is read
// backwards.
func pageKeyOf(id string, a pageArgs) pageKey {
	k := pageKey{id: id}
	if a.last != nil {
		k.last, k.hasLast = *a.last, true
	} else {
		k.first = firstOr(a.first)
	}
	if a.after != nil {
		k.after, k.hasAfter = *a.after, true
	}
	if a.before != nil {
		k.before, k.hasBefore = *a.before, true
	}
	return k
}

// projectTasksKey identifies a page of a project's tasks, of one status or
// ("") all, and whether its nodes select only taskListFields (two
// selections of one page are two keys: one has partial tasks).
type projectTasksKey struct {
	pageKey
	status domain.TaskStatus
	listed bool
}

func projectTasksKeyOf(id string, status *domain.TaskStatus, a pageArgs) projectTasksKey {
	k := projectTasksKey{pageKey: pageKeyOf(id, a)}
	if status != nil {
		k.status = *status
	}
	return k
}

// overdueKey identifies a page of a user's tasks overdue as of a date.
type overdueKey struct {
	pageKey
	asOf string
}

// Args are a list field's arguments, as its resolver gets them (gqlgen's
// typed arguments) or a read ahead decodes them (listArgsOf): the key of
// the page they ask for is made from them either way, so the two share
// one read.
type Args struct {
	First  *int
	After  *string
	Last   *int
	Before *string
	Status *domain.TaskStatus
	AsOf   *domain.Date
	// Of is the object the list is under, when the resolver has it: a
	// task's item tells how its comments are read (CommentsOf).
	Of any
	// badAsOf: asOf is given but no date (the resolver reports it).
	badAsOf bool
}

// page is a's page arguments.
func (a Args) page() pageArgs { return pageArgs{a.First, a.After, a.Last, a.Before} }

// listArgsOf decodes a field's raw arguments (variables substituted) as
// gqlgen would for its resolver. A value of the wrong type counts as absent
// (the resolver reports it; its key only costs a read that is never used).
func listArgsOf(raw map[string]any) Args {
	var a Args
	a.First = intArg(raw["first"])
	a.After = strArg(raw["after"])
	a.Last = intArg(raw["last"])
	a.Before = strArg(raw["before"])
	if s := strArg(raw["status"]); s != nil {
		st := domain.TaskStatus(*s)
		a.Status = &st
	}
	if s := strArg(raw["asOf"]); s != nil {
		d, err := domain.ParseDate(*s)
		a.AsOf, a.badAsOf = &d, err != nil
	}
	return a
}

// intArg reads an Int argument; absent or null is nil, a number that is
// no integer -1 (refused by the store).
func intArg(v any) *int {
	var n int
	switch x := v.(type) {
	case int:
		n = x
	case int64:
		n = int(x)
	case float64:
		n = int(x)
	case json.Number:
		i, err := x.Int64()
		if n = int(i); err != nil {
			n = -1
		}
	default:
		return nil
	}
	return &n
}

func strArg(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}
