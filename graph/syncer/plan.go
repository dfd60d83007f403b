package syncer

import (
	"cmp"
	"context"
	"slices"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/policy"
)

// work is one project's part of a page.
type work struct {
	st      *cursor.Project // as the next token has it; nil: done with the project
	p       *domain.Project
	visible bool
	upTo    int64 // read the log up to (the project's seq)
	demand  int64 // how many entries may be left, at most
	limit   int   // how many this page reads
	res     loaders.Changes
}

// pagePlan is which projects a page reads, from the token and the
// viewer's partition (dynamo.SyncView), before any project is read:
//
//   - read: at most Batch projects, in this order: those the token
//     follows that the profile no longer lists (their tombstones first),
//     those the token follows with something to read (no mark, or a mark
//     past the token's position), then those the profile lists and the
//     token does not follow yet (joined; all of them in a base sync);
//   - quiet: those the token follows and the profile lists whose mark
//     stands at the token's position: nothing changed (marks.go), not
//     read;
//   - kept: those the token follows that wait for a later page (more).
type pagePlan struct {
	read  []string
	quiet []*cursor.Project
	kept  []*cursor.Project
	// states are the token's, by project id.
	states map[string]*cursor.Project
	more   bool
}

// planPage plans a page of the token tok for the viewer's partition view.
func planPage(tok *cursor.Sync, view *dynamo.SyncView) pagePlan {
	plan := pagePlan{states: map[string]*cursor.Project{}}
	var leaving, changed, joined []string
	for i := range tok.States {
		st := &tok.States[i]
		plan.states[st.ID] = st
		switch seen := policy.SeesProject(view.Profile, st.ID); {
		case !seen:
			leaving = append(leaving, st.ID)
		case st.Mode == cursor.Read && markedAt(view, st.ID, st.Pos):
			plan.quiet = append(plan.quiet, st)
		default:
			changed = append(changed, st.ID)
		}
	}
	for _, id := range policy.ProjectsSeen(view.Profile) {
		if _, ok := plan.states[id]; !ok {
			joined = append(joined, id)
		}
	}
	for _, ids := range [][]string{leaving, changed, joined} {
		slices.Sort(ids)
		for _, id := range ids {
			switch st := plan.states[id]; {
			case len(plan.read) < Batch:
				plan.read = append(plan.read, id)
			case st != nil:
				plan.kept, plan.more = append(plan.kept, st), true
			default:
				plan.more = true // joined: the next page
			}
		}
	}
	return plan
}

// markedAt reports whether the viewer's mark of project id stands at pos:
// the project has not changed since the token read it up to there.
func markedAt(view *dynamo.SyncView, id string, pos int64) bool {
	seq, ok := view.Marks[id]
	return ok && seq == pos
}

// readProjects reads the projects the plan reads, with the viewer's
// profile's copies of them (dynamo.Store.SyncProjects, one BatchGetItem:
// the visibility check beside the projects' seqs), and makes each one's part of the page (works) by its state and
// what the check says now:
//
//   - visible, not followed: joined (a base sync), the whole log but what
//     was deleted before (skip: its seq now); the project's upsert;
//   - visible, being left: back, read from the start, the gone entries
//     past what the client had as tombstones;
//   - visible, followed: the log past the token's position; the project's
//     upsert when it changed itself (projectSeq);
//   - not visible, followed: left (or deleted): its tombstone, then every
//     entry of its log as a tombstone (leave);
//   - not visible, being left: the leave goes on.
func (pg *pageRun) readProjects(ctx context.Context) error {
	l := pg.l
	if pg.view.Profile != nil { // for the page's nested fields, read once
		l.Prime(ctx, dynamo.UserRef(l.Viewer()), pg.view.Profile)
	}
	pg.profile, pg.more = pg.view.Profile, pg.plan.more
	if len(pg.plan.read) == 0 {
		return nil
	}
	seen, projects, err := l.Store().SyncProjects(ctx, l.Viewer(), pg.plan.read)
	if err != nil {
		return err
	}
	for i, id := range pg.plan.read {
		p := projects[i]
		if p != nil { // for the upserts' fields
			l.Prime(ctx, dynamo.ProjectRef(id), p)
		}
		// A project listed by the first read and gone by this one's is
		// left (or deleted); one listed only now comes with the next sync.
		w := &work{st: pg.plan.states[id], p: p, visible: p != nil && policy.SeesProject(seen, id)}
		if w.st == nil && !w.visible { // joined a moment ago, and left or deleted already: nothing to say
			continue
		}
		pg.begin(w)
		pg.works = append(pg.works, w)
	}
	return nil
}

// begin sets a project's state for this page, as readProjects says, and
// what its log may hold past it.
func (pg *pageRun) begin(w *work) {
	p := w.p
	switch st := w.st; {
	case w.visible && st == nil: // joined (or a base sync): the whole log, but what was deleted before
		w.st = &cursor.Project{ID: p.ID, Mode: cursor.Read, Skip: p.Seq, Seen: p.ProjectSeq}
		pg.out.upsert(p.ID, p)
	case w.visible && st.Mode == cursor.Leave: // back before its tombstones were all delivered
		w.st = &cursor.Project{ID: p.ID, Mode: cursor.Read, Skip: st.Skip, Seen: p.ProjectSeq}
		pg.out.upsert(p.ID, p)
	case w.visible:
		if p.ProjectSeq > st.Seen {
			st.Seen = p.ProjectSeq
			pg.out.upsert(p.ID, p)
		}
	case st.Mode == cursor.Read: // left, or deleted: tombstones for all of it
		pg.out.tomb(st.ID, "Project")
		w.st = &cursor.Project{ID: st.ID, Mode: cursor.Leave, Skip: st.Pos}
	}
	w.upTo = maxPosition
	if p != nil {
		w.upTo = p.Seq
	}
	w.st.Pos = min(w.st.Pos, w.upTo)
	w.demand = w.upTo - w.st.Pos
}

// states are the next token's projects: those the page read, quiet and
// kept, in the order of their ids.
func (pg *pageRun) states() []cursor.Project {
	var out []cursor.Project
	for _, w := range pg.works {
		if w.st != nil {
			out = append(out, *w.st)
		}
	}
	for _, sts := range [][]*cursor.Project{pg.plan.quiet, pg.plan.kept} {
		for _, st := range sts {
			out = append(out, *st)
		}
	}
	slices.SortFunc(out, func(a, b cursor.Project) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
