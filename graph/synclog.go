package graph

import (
	"context"
	"github.com/taskgraph/taskgraph/cursor"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
)

// changesKey is one read of a project's change log (readLogs).
type changesKey struct {
	project     string
	after, upTo int64
	limit       int
	// departure: also read when the viewer left the project, and its seq
	// again after the log.
	departure bool
}

type changesResult struct {
	changes []dynamo.Change
	more    bool
	left    int64 // the position of the viewer's last removal (departure), 0: none
	// seqAfter is the project's seq read again after its log (a leave):
	// no entry moved past the read when it is still the seq read before.
	seqAfter int64
}

// share gives each project a part of the page's first entries: as many as
// it may have (its demand), the rest split evenly.
func share(works []*syncWork, budget int) {
	active := make([]*syncWork, 0, len(works))
	for _, w := range works {
		if w.demand > 0 {
			active = append(active, w)
		}
	}
	for len(active) > 0 && budget > 0 {
		each := max(1, budget/len(active))
		next := active[:0]
		for _, w := range active {
			give := int(min(int64(each), w.demand-int64(w.limit), int64(budget)))
			w.limit += give
			budget -= give
			if int64(w.limit) < w.demand && budget > 0 {
				next = append(next, w)
			}
		}
		active = next
	}
}

// readLogs reads each project's share of its log, all at once (one
// strongly consistent Query per project with a share), and applies the
// entries: where the project's state goes, and what they bring to the
// page.
func (pg *syncPageRun) readLogs(ctx context.Context) error {
	l, viewer := pg.l, pg.l.viewer
	reads := each(l, "changesOf", func(ctx context.Context, k changesKey) (changesResult, error) {
		var r changesResult
		var err error
		if k.departure {
			if r.left, err = l.store.Departure(ctx, k.project, viewer); err != nil {
				return r, err
			}
		}
		if r.changes, r.more, err = l.store.Changes(ctx, k.project, k.after, k.upTo, k.limit); err != nil || !k.departure {
			return r, err
		}
		r.seqAfter, err = l.store.ProjectSeq(ctx, k.project)
		return r, err
	})
	ths := make([]func() (changesResult, error), len(pg.works))
	for i, w := range pg.works {
		if w.limit > 0 {
			ths[i] = reads.Load(ctx, changesKey{project: w.st.ID, after: w.st.Pos, upTo: w.upTo, limit: w.limit,
				departure: w.st.Mode == cursor.Leave})
		}
	}
	for i, w := range pg.works {
		if ths[i] != nil {
			var err error
			if w.res, err = ths[i](); err != nil {
				return err
			}
		}
		pg.apply(w)
	}
	return nil
}

// apply moves a project's state past the entries its read returned, and
// makes them the page's upserts and tombstones.
func (pg *syncPageRun) apply(w *syncWork) {
	done := true
	switch {
	case w.limit == 0 && w.demand > 0: // no room in this page
		pg.more = true
		return
	case w.res.more:
		w.st.Pos = w.res.changes[len(w.res.changes)-1].Pos
		pg.more, done = true, false
	default:
		w.st.Pos = w.upTo
		// An object of a project that still exists may have moved past
		// upTo while its log was read (a change committed after the
		// project's read): a leave is done once a read saw the project
		// at the same seq after it as before, or nothing to read. (A
		// deleted project's log no longer moves.)
		done = w.st.Mode != cursor.Leave || w.p == nil || w.limit == 0 || w.res.seqAfter == w.upTo
		pg.more = pg.more || !done // read on at once: what moved lies past upTo
	}
	if w.st.Mode == cursor.Leave && w.res.left > w.st.Skip && w.res.left > w.st.Seen {
		w.st.Seen = w.res.left // when they left, kept while the departure itself may expire
	}
	for _, c := range w.res.changes {
		if w.st.Mode == cursor.Leave {
			pg.out.leave(w, c)
		} else {
			pg.out.change(w, c)
		}
	}
	if w.st.Mode == cursor.Leave && done {
		w.st = nil // every tombstone delivered
	}
}

// change applies an entry of a project the viewer sees: a live entry is
// its object's upsert (a comment's, its task's too: its count changed; a
// member's, the user's); a gone one its tombstone (a deleted task's, its
// comments' too; a removed member's, the user's if the viewer shares no
// other project with them), but where the client never had it (at or
// below skip: a join).
func (o *syncOut) change(w *syncWork, c dynamo.Change) {
	tombstone := c.Gone && c.Pos > w.st.Skip
	switch domain.KindOf(c.ID) {
	case domain.KindUser:
		switch {
		case !c.Gone:
			o.read(&o.users, "u", c.ID)
		case tombstone:
			o.read(&o.candidates, "c", c.ID)
		}
	case domain.KindTask:
		switch {
		case !c.Gone:
			o.read(&o.tasks, "t", c.ID)
		case tombstone:
			o.tomb(c.ID, "Task")
			for _, cm := range c.Comments {
				o.tomb(cm, "Comment")
			}
		}
	case domain.KindComment:
		taskID, _ := domain.ParseCommentID(c.ID)
		switch {
		case !c.Gone:
			o.read(&o.comments, "m", c.ID)
			o.read(&o.tasks, "t", taskID)
		case tombstone:
			o.tomb(c.ID, "Comment")
			o.read(&o.tasks, "t", taskID)
		}
	}
}

// leave applies an entry of a project the viewer no longer sees: the
// tombstone of its object, but for a gone entry the client had (at or
// below skip: delivered already), and for an object made after the viewer
// was removed (born after the removal's position, the departure's, which
// the state keeps in seen), which the viewer never saw. A departure at or
// below skip is of an earlier membership: the project was deleted while
// they were in it, and all of it was theirs to see.
func (o *syncOut) leave(w *syncWork, c dynamo.Change) {
	if c.Gone && c.Pos <= w.st.Skip {
		return
	}
	out := w.st.Seen // the removal's position (see page); 0: none
	after := func(born int64) bool { return c.Pos > w.st.Skip && out > 0 && born > out }
	switch domain.KindOf(c.ID) {
	case domain.KindUser:
		if !after(c.Born) {
			o.read(&o.candidates, "c", c.ID)
		}
	case domain.KindTask:
		if after(c.Born) {
			return
		}
		o.tomb(c.ID, "Task")
		for i, cm := range c.Comments {
			if !after(c.CommentsBorn[i]) {
				o.tomb(cm, "Comment")
			}
		}
	case domain.KindComment:
		if !after(c.Born) {
			o.tomb(c.ID, "Comment")
		}
	}
}
