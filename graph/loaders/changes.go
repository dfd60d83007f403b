package loaders

import (
	"context"

	"github.com/taskgraph/taskgraph/dynamo"
)

// ChangesKey is one read of a project's change log, a sync page's
// (docs/sync.md): its entries after After up to UpTo, at most Limit.
type ChangesKey struct {
	Project     string
	After, UpTo int64
	Limit       int
	// Departure: the viewer is leaving the project; also read where they
	// last left it, and its seq again after the log.
	Departure bool
}

// Changes is what a ChangesKey's read returns.
type Changes struct {
	Changes []dynamo.Change
	More    bool
	// Left is the position of the viewer's last removal (Departure), 0:
	// none.
	Left int64
	// SeqAfter is the project's seq read again after its log (Departure):
	// no entry moved past the read when it is still the seq read before.
	SeqAfter int64
}

// ChangesOf asks for a read of a project's change log (access pattern:
// changesOf, one strongly consistent Query per key, a batch's keys all at
// once) and returns what waits for it.
func (l *Loaders) ChangesOf(ctx context.Context, k ChangesKey) func() (Changes, error) {
	return changesOf.loader(l).Load(ctx, k)
}

func (l *Loaders) fetchChangesOf(ctx context.Context, k ChangesKey) (Changes, error) {
	var r Changes
	var err error
	if k.Departure {
		if r.Left, err = l.store.Departure(ctx, k.Project, l.viewer); err != nil {
			return r, err
		}
	}
	if r.Changes, r.More, err = l.store.Changes(ctx, k.Project, k.After, k.UpTo, k.Limit); err != nil || !k.Departure {
		return r, err
	}
	r.SeqAfter, err = l.store.ProjectSeq(ctx, k.Project)
	return r, err
}
