package live

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/taskgraph/taskgraph/dynamo"
)

// A cursor names one event of one project's stream: the project id and the
// event's stream sequence, base64url-encoded so that clients treat it as
// opaque. It is bound to its project: a cursor of another project is
// refused, so a client cannot resume one project's stream at a position
// learned from another.
const cursorPrefix = "ev1:"

// Cursor returns the cursor of the event at stream sequence seq of project.
func Cursor(project string, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + project + "|" + strconv.FormatUint(seq, 10)))
}

// ParseCursor returns the stream sequence of a cursor of project. Returns
// EINVALID for a malformed cursor or one of another project.
func ParseCursor(project, cursor string) (uint64, error) {
	bad := dynamo.Errorf(dynamo.EINVALID, "after is not a cursor of this project's events")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !strings.HasPrefix(string(raw), cursorPrefix) {
		return 0, bad
	}
	p, s, ok := strings.Cut(strings.TrimPrefix(string(raw), cursorPrefix), "|")
	if !ok || p != project {
		return 0, bad
	}
	seq, err := strconv.ParseUint(s, 10, 64)
	if err != nil || seq == 0 || strconv.FormatUint(seq, 10) != s {
		return 0, bad
	}
	return seq, nil
}
