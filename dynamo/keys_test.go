package dynamo

import (
	"encoding/base64"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
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

func mustDate(t *testing.T, s string) *domain.Date {
	t.Helper()
	d, err := domain.ParseDate(s)
	if err != nil {
		t.Fatalf("ParseDate(%q): %v", s, err)
	}
	return &d
}

// wantCode fails unless err carries the store error code want ("" for nil).
func wantCode(t *testing.T, what string, err error, want string) {
	t.Helper()
	if got := domain.ErrorCode(err); got != want {
		t.Errorf("%s: error code %q (%v), want %q", what, got, err, want)
	}
}

type dueEntry struct {
	due *domain.Date
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
	dates := []*domain.Date{nil, mustDate(t, "2025-12-31"), mustDate(t, "2026-01-01"), mustDate(t, "2026-01-10"),
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
	for _, due := range []*domain.Date{nil, mustDate(t, "2026-08-25"), mustDate(t, "0001-01-01"), mustDate(t, "2024-02-29")} {
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
			got, err := cursor.OpenList(cursor.List(c.sk), c.valid)
			if err != nil || got != c.sk {
				t.Errorf("cursor.OpenList(cursor.List(%q)) = %q, %v", c.sk, got, err)
			}
		}
	})
	t.Run("the cursor is opaque: no raw key in it", func(t *testing.T) {
		// (Not "DUE" alone: base64 of a random ULID may spell it.)
		if c := cursor.List(dueKey); strings.Contains(c, dueKey) || strings.Contains(c, duePrefix) || strings.Contains(c, "#") {
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
		{"padded base64", base64.URLEncoding.EncodeToString([]byte("c1:" + "DUE#2026-08-25#" + ids[0])), validDueCursor},
		{"standard base64 alphabet", base64.StdEncoding.EncodeToString([]byte("c1:" + dueKey + "\xfb\xff")), validDueCursor},
		{"no version", raw(dueKey), validDueCursor},
		{"other version", raw("c2:" + dueKey), validDueCursor},
		{"version only", raw("c1:"), validDueCursor},
		{"raw sort key", dueKey, validDueCursor},
		{"comment cursor on a due-date list", cursor.List(commentKey), validDueCursor},
		{"due-date cursor on a comment list", cursor.List(dueKey), validULIDCursor(commentPrefix)},
		{"project cursor on a comment list", cursor.List(userProjectsSK(ids[0])), validULIDCursor(commentPrefix)},
		{"bad date in the key", cursor.List(duePrefix + "2026-13-01#" + ids[0]), validDueCursor},
		{"lower-case ULID in the key", cursor.List(commentPrefix + strings.ToLower(ids[1])), validULIDCursor(commentPrefix)},
		{"smuggled partition", cursor.List(commentKey + "#" + taskPK(ids[0])), validULIDCursor(commentPrefix)},
		{"range end", cursor.List(duePrefix + rangeEnd), validDueCursor},
		{"prefix only", cursor.List(commentPrefix), validULIDCursor(commentPrefix)},
	}
	for _, c := range bad {
		t.Run("rejects "+c.name, func(t *testing.T) {
			got, err := cursor.OpenList(c.cursor, c.valid)
			if err == nil {
				t.Fatalf("cursor.OpenList(%q) = %q, want an error", c.cursor, got)
			}
			wantCode(t, "decodeCursor", err, domain.EINVALID)
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
				if _, ok := domain.ParseULID(id); !ok {
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
		if _, err := domain.ParseProjectID(domain.ProjectIDOf(a)); err != nil {
			t.Error(err)
		}
		if _, err := domain.ParseTaskID(domain.TaskIDOf(a)); err != nil {
			t.Error(err)
		}
		if _, err := domain.ParseCommentID(domain.CommentIDOf(a, b)); err != nil {
			t.Error(err)
		}
	})
}
