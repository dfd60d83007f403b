package graph

import (
	"strings"

	"github.com/taskgraph/taskgraph/live"
)

// SyncTokenStates tells, for tests' messages, the per-project states a
// sync token of viewer holds (sealed by a handler without a hub).
func SyncTokenStates(viewer, token string) string {
	final, seq, body, err := live.ProcessCursors().OpenSync(viewer, token)
	if err != nil {
		return err.Error()
	}
	t, err := decodeToken(body)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	b.WriteString(strings.Join([]string{"final", map[bool]string{true: "yes", false: "no"}[final]}, " "))
	_ = seq
	for _, p := range t.projects {
		b.WriteString("; " + p.String())
	}
	return b.String()
}

// SyncBatch is how many projects a sync page reads at most.
const SyncBatch = syncBatch
