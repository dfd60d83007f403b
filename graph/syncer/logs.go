package syncer

import (
	"context"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/policy"
)

// share gives each project a part of the page's first entries: as many as
// it may have (its demand), the rest split evenly.
func share(works []*work, budget int) {
	active := make([]*work, 0, len(works))
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
func (pg *pageRun) readLogs(ctx context.Context) error {
	ths := make([]func() (loaders.Changes, error), len(pg.works))
	for i, w := range pg.works {
		if w.limit > 0 {
			ths[i] = pg.l.ChangesOf(ctx, loaders.ChangesKey{Project: w.st.ID, After: w.st.Pos, UpTo: w.upTo, Limit: w.limit,
				Departure: w.st.Mode == cursor.Leave})
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
func (pg *pageRun) apply(w *work) {
	done := true
	switch {
	case w.limit == 0 && w.demand > 0: // no room in this page
		pg.more = true
		return
	case w.res.More:
		w.st.Pos = w.res.Changes[len(w.res.Changes)-1].Pos
		pg.more, done = true, false
	default:
		w.st.Pos = w.upTo
		// An object of a project that still exists may have moved past
		// upTo while its log was read (a change committed after the
		// project's read): a leave is done once a read saw the project
		// at the same seq after it as before, or nothing to read. (A
		// deleted project's log no longer moves.)
		done = w.st.Mode != cursor.Leave || w.p == nil || w.limit == 0 || w.res.SeqAfter == w.upTo
		pg.more = pg.more || !done // read on at once: what moved lies past upTo
	}
	if w.st.Mode == cursor.Leave && w.res.Left > w.st.Skip && w.res.Left > w.st.Seen {
		w.st.Seen = w.res.Left // when they left, kept while the departure itself may expire
	}
	for _, c := range w.res.Changes {
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
func (o *output) change(w *work, c dynamo.Change) {
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
// the state keeps in seen), which the viewer never saw
// (policy.KnownBeforeLeaving). A departure at or below skip is of an
// earlier membership: the project was deleted while they were in it, and
// all of it was theirs to see.
func (o *output) leave(w *work, c dynamo.Change) {
	if c.Gone && c.Pos <= w.st.Skip {
		return
	}
	left := w.st.Seen // the removal's position (see apply); 0: none
	if c.Pos <= w.st.Skip {
		left = 0 // an entry of an earlier membership's time
	}
	known := func(born int64) bool { return policy.KnownBeforeLeaving(born, left) }
	switch domain.KindOf(c.ID) {
	case domain.KindUser:
		if known(c.Born) {
			o.read(&o.candidates, "c", c.ID)
		}
	case domain.KindTask:
		if !known(c.Born) {
			return
		}
		o.tomb(c.ID, "Task")
		for i, cm := range c.Comments {
			if known(c.CommentsBorn[i]) {
				o.tomb(cm, "Comment")
			}
		}
	case domain.KindComment:
		if known(c.Born) {
			o.tomb(c.ID, "Comment")
		}
	}
}
