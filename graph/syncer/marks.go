package syncer

import (
	"context"
	"log/slog"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/policy"
)

// mark writes the viewer's sync marks (dynamo/syncmark.go) of the
// projects this page caught up with: read as visible up to the seq its
// visibility check read, with no mark there yet. Only for a viewer in
// more projects than one page reads (Batch): below, a page reads all
// their projects in its one BatchGetItem anyway, and marks would only cost
// their projects' next changes a transaction. Best effort: a mark not
// written (a project changed meanwhile, a store that takes no writes)
// only has the next page read that project. (dynamo.Store.MarkEverySync:
// every page, for tests on a few projects.)
func (pg *pageRun) mark(ctx context.Context) {
	if len(policy.ProjectsSeen(pg.view.Profile)) <= Batch && !pg.l.Store().MarkEverySync {
		return
	}
	seqs := map[string]int64{}
	for _, w := range pg.works {
		if w.visible && w.st != nil && w.st.Mode == cursor.Read && w.st.Pos == w.upTo && !markedAt(pg.view, w.st.ID, w.upTo) {
			seqs[w.st.ID] = w.upTo
		}
	}
	if len(seqs) == 0 {
		return
	}
	if _, err := pg.l.Store().Mark(ctx, pg.l.Viewer(), seqs); err != nil && ctx.Err() == nil {
		pg.l.Store().Log.LogAttrs(ctx, slog.LevelDebug, "sync marks not written", slog.String("err", err.Error()))
	}
}
