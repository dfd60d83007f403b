package graph

import (
	"strings"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/graph/syncer"
)

// SyncTokenStates tells, for tests' messages, the per-project states a
// sync token of viewer holds (sealed by a handler without a hub).
func SyncTokenStates(viewer, token string) string {
	t, err := cursor.Process().OpenSync(viewer, token)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	b.WriteString(strings.Join([]string{"final", map[bool]string{true: "yes", false: "no"}[t.Final]}, " "))
	for _, p := range t.States {
		b.WriteString("; " + p.String())
	}
	return b.String()
}

// SyncBatch is how many projects a sync page reads at most.
const SyncBatch = syncer.Batch
