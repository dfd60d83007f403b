package dynamo

import (
	"strings"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
)

// A list's cursors and the size and direction of its pages, read from the
// arguments first, after, last and before.

// MaxFirst is the largest page a list returns, read forwards (first) or
// backwards (last).
const MaxFirst = 100

// A list's cursor is the sort key of an item of a page (cursor.List). The
// partition is never in it: the connection supplies its own, so a cursor
// cannot lead a read into another partition. Each list checks the sort
// key's shape before using it (cursor.OpenList's valid).

// cursorArg decodes the optional cursor argument arg ("after", "before"):
// "" when it is absent.
func cursorArg(arg string, c *string, valid func(string) bool) (string, error) {
	if c == nil {
		return "", nil
	}
	sk, err := cursor.OpenList(*c, valid)
	if err != nil {
		return "", domain.Errorf(domain.EINVALID, "%s: %s", arg, domain.ErrorMessage(err))
	}
	return sk, nil
}

// pageSize returns the page's size and whether it is read backwards (Last).
func pageSize(p domain.Page) (n int, back bool, err error) {
	name, n := "first", p.First
	if p.Last != nil {
		if p.First != 0 {
			return 0, false, domain.Errorf(domain.EINVALID, "first and last cannot be given together: first reads a page forwards, last backwards")
		}
		name, n, back = "last", *p.Last, true
	}
	if n < 1 || n > MaxFirst {
		return 0, false, domain.Errorf(domain.EINVALID, "%s must be between 1 and %d, not %d", name, MaxFirst, n)
	}
	return n, back, nil
}

// validULIDCursor checks the sort key of a cursor of a list ordered by the
// ULID after prefix.
func validULIDCursor(prefix string) func(string) bool {
	return func(sk string) bool {
		u, ok := strings.CutPrefix(sk, prefix)
		_, valid := domain.ParseULID(u)
		return ok && valid
	}
}
