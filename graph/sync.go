package graph

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/policy"
)

// Query.sync (docs/sync.md): for the viewer, across their projects, what
// changed since a token. Each page reads the viewer's memberships (GSI1),
// then the projects of the token and of the memberships with the viewer's
// membership of each and their profile, in one batch: the visibility
// check (visibleProjects), which also gives each project's seq. Then, per
// project, its change log (dynamo.Store.Changes) above the token's position
// and up to that seq, all at once, and the objects its entries name, in
// one batch. A project the viewer joined is read from the start of its
// log; one they left becomes tombstones for everything in it.

// defaultSyncFirst is sync's first when it is not given.
const defaultSyncFirst = 100

// maxPosition bounds the read of a deleted project's log: nothing is added
// to it any more.
const maxPosition = 999_999_999_999

// syncer is what Query.sync needs besides the request's loaders: the
// sealing of its tokens, and the live stream's position.
type syncer struct {
	cursors *live.Cursors
	hub     *live.Hub // nil: no live updates
}

func newSyncer(o Options) *syncer {
	if o.Live != nil {
		return &syncer{cursors: o.Live.Cursors(), hub: o.Live}
	}
	return &syncer{cursors: live.ProcessCursors()}
}

// syncWork is one project's part of a page.
type syncWork struct {
	st      *projectState // as the next token has it; nil: done with the project
	p       *domain.Project
	visible bool
	upTo    int64 // read the log up to (the project's seq)
	demand  int64 // how many entries may be left, at most
	limit   int   // how many this page reads
	res     changesResult
}

// changesKey is one read of a project's change log (changesOf).
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

// syncOut collects a page's objects: each at most once, as an upsert or a
// tombstone.
type syncOut struct {
	upserts    map[string]model.Node
	order      []string
	tombstones map[string]string // id → typename
	tombOrder  []string
	tasks      []string // tasks to read
	comments   []string // comments to read
	users      []string // member entries: users to read
	candidates []string // users who may have stopped being visible
	want       map[string]bool
}

func (o *syncOut) upsert(id string, v model.Node) {
	if _, ok := o.upserts[id]; !ok {
		o.order = append(o.order, id)
	}
	o.upserts[id] = v
}

func (o *syncOut) tomb(id, typename string) {
	if _, ok := o.tombstones[id]; !ok {
		o.tombOrder = append(o.tombOrder, id)
	}
	o.tombstones[id] = typename
}

// read notes an object to read once (list: tasks, comments, users or
// candidates).
func (o *syncOut) read(list *[]string, kind, id string) {
	if !o.want[kind+id] {
		o.want[kind+id] = true
		*list = append(*list, id)
	}
}

// page answers one page of Query.sync.
func (s *syncer) page(ctx context.Context, l *Loaders, since *string, first *int) (*model.SyncPage, error) {
	n := defaultSyncFirst
	if first != nil {
		n = *first
	}
	if n < 1 || n > dynamo.MaxFirst {
		return nil, domain.Errorf(domain.EINVALID, "first must be between 1 and %d", dynamo.MaxFirst)
	}
	epoch, ok := l.store.ChangeEpoch()
	if !ok {
		return nil, domain.Errorf(domain.EUNAVAILABLE,
			"sync is not available on this table yet: it was written by a version without the change log (an export and import builds it)")
	}
	viewer := l.viewer
	tok := &syncToken{epoch: epoch}
	if since != nil {
		_, _, body, err := s.cursors.OpenSync(viewer, *since)
		if err != nil {
			return nil, err
		}
		if tok, err = decodeToken(body); err != nil {
			return nil, domain.Errorf(domain.EINVALID, "since is not a sync token of this viewer")
		}
		retention := l.store.Retention()
		switch {
		case tok.epoch != epoch:
			return nil, domain.Errorf(domain.EEXPIRED, "the server's change log was rebuilt since this token was issued: sync again with since: null")
		case l.now().Sub(time.Unix(tok.issued, 0)) > retention:
			return nil, domain.Errorf(domain.EEXPIRED,
				"this sync token is older than the %d days the server keeps changes for: sync again with since: null", int(retention.Hours()/24))
		}
	}
	// The stream's position before the visibility read: every change the
	// sync does not see is published after it (projectEvents' after).
	var stream uint64
	streamOK := false
	if s.hub != nil {
		seq, err := s.hub.LastSeq(ctx)
		stream, streamOK = seq, err == nil
	}
	t0 := l.now()

	// 1. The viewer's projects: their memberships, and those of the token.
	// Read here rather than through ProjectIDsOfUser, which puts the
	// memberships in the point reads' cache: the visibility check must read
	// them strongly consistently (a member removed a moment ago may still
	// be in GSI1).
	ms, err := l.store.MembershipsOfUser(ctx, viewer)
	if err != nil {
		return nil, err
	}
	mine := make([]string, len(ms))
	for i, m := range ms {
		mine[i] = m.ProjectID
	}
	l.projectIDsOfUserLoader().Prime(ctx, viewer, mine) // for visibleUsers
	states := map[string]*projectState{}
	var ids []string
	for i := range tok.projects {
		st := tok.projects[i]
		states[st.id] = &st
		ids = append(ids, st.id)
	}
	ids = append(ids, mine...)
	slices.Sort(ids)
	ids = slices.Compact(ids) // a project of both, once
	// 2. The visibility check: projects and memberships, with the profile.
	profile := load[*domain.User](ctx, l, dynamo.UserRef(viewer))
	for _, id := range ids { // the projects join the profile's batch
		l.objects.Load(ctx, dynamo.ProjectRef(id))
	}
	visible, err := l.visibleProjects(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := &syncOut{upserts: map[string]model.Node{}, tombstones: map[string]string{}, want: map[string]bool{}}
	works := make([]*syncWork, 0, len(ids))
	for i, id := range ids {
		p, err := notFoundAsNil(l.ProjectByID(ctx, id))
		if err != nil {
			return nil, err
		}
		w := &syncWork{st: states[id], p: p, visible: visible[i]}
		switch st := w.st; {
		case w.visible && st == nil: // joined (or a base sync): the whole log, but what was deleted before
			w.st = &projectState{id: id, mode: modeRead, skip: p.Seq, seen: p.ProjectSeq}
			out.upsert(id, p)
		case w.visible && st.mode == modeLeave: // back before its tombstones were all delivered
			w.st = &projectState{id: id, mode: modeRead, skip: st.skip, seen: p.ProjectSeq}
			out.upsert(id, p)
		case w.visible:
			if p.ProjectSeq > st.seen {
				st.seen = p.ProjectSeq
				out.upsert(id, p)
			}
		case st == nil: // listed by a membership, not visible: nothing to say
			continue
		case st.mode == modeRead: // left, or deleted: tombstones for all of it
			out.tomb(id, "Project")
			w.st = &projectState{id: id, mode: modeLeave, skip: st.pos}
		}
		w.upTo = maxPosition
		if p != nil {
			w.upTo = p.Seq
		}
		w.st.pos = min(w.st.pos, w.upTo)
		w.demand = w.upTo - w.st.pos
		works = append(works, w)
	}
	share(works, n)

	// 3. The change logs, one Query per project, all at once.
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
	ths := make([]func() (changesResult, error), len(works))
	for i, w := range works {
		if w.limit > 0 {
			ths[i] = reads.Load(ctx, changesKey{project: w.st.id, after: w.st.pos, upTo: w.upTo, limit: w.limit,
				departure: w.st.mode == modeLeave})
		}
	}
	hasMore := false
	for i, w := range works {
		if ths[i] != nil {
			if w.res, err = ths[i](); err != nil {
				return nil, err
			}
		}
		done := true
		switch {
		case w.limit == 0 && w.demand > 0: // no room in this page
			hasMore = true
			continue
		case w.res.more:
			w.st.pos = w.res.changes[len(w.res.changes)-1].Pos
			hasMore, done = true, false
		default:
			w.st.pos = w.upTo
			// An object of a project that still exists may have moved past
			// upTo while its log was read (a change committed after the
			// project's read): a leave is done once a read saw the project
			// at the same seq after it as before, or nothing to read. (A
			// deleted project's log no longer moves.)
			done = w.st.mode != modeLeave || w.p == nil || w.limit == 0 || w.res.seqAfter == w.upTo
			hasMore = hasMore || !done // read on at once: what moved lies past upTo
		}
		if w.st.mode == modeLeave && w.res.left > w.st.skip && w.res.left > w.st.seen {
			w.st.seen = w.res.left // when they left, kept while the departure itself may expire
		}
		for _, c := range w.res.changes {
			if w.st.mode == modeLeave {
				out.leave(w, c)
			} else {
				out.change(w, c)
			}
		}
		if w.st.mode == modeLeave && done {
			w.st = nil // every tombstone delivered
		}
	}

	// 4. The objects the entries name, in one batch, with the viewer's
	// profile; the users who may have stopped being visible.
	tasks := make([]func() (*domain.Task, error), len(out.tasks))
	for i, id := range out.tasks {
		tasks[i] = load[*domain.Task](ctx, l, dynamo.TaskRef(id))
	}
	comments := make([]func() (*domain.Comment, error), len(out.comments))
	for i, id := range out.comments {
		comments[i] = load[*domain.Comment](ctx, l, dynamo.CommentRef(id))
	}
	users := make([]func() (*domain.User, error), len(out.users))
	for i, id := range out.users {
		users[i] = load[*domain.User](ctx, l, dynamo.UserRef(id))
	}
	gone := map[string]bool{} // tasks that no longer exist
	for i, id := range out.tasks {
		t, err := notFoundAsNil(tasks[i]())
		switch {
		case err != nil:
			return nil, err
		case t == nil:
			gone[id] = true
			out.tomb(id, "Task")
		default:
			out.upsert(id, t)
		}
	}
	for i, id := range out.comments {
		c, err := notFoundAsNil(comments[i]())
		taskID, _ := domain.ParseCommentID(id)
		switch {
		case err != nil:
			return nil, err
		case c == nil || gone[taskID]: // a comment of a deleted task: gone with it
			out.tomb(id, "Comment")
		default:
			out.upsert(id, c)
		}
	}
	for i, id := range out.users {
		u, err := notFoundAsNil(users[i]())
		if err != nil {
			return nil, err
		}
		if u != nil {
			out.upsert(id, u)
		}
	}
	if len(out.candidates) > 0 {
		var tracked []*syncWork // the projects this page reads as visible
		for _, w := range works {
			if w.visible && w.st != nil {
				tracked = append(tracked, w)
			}
		}
		seen, err := l.stillSeen(ctx, out.candidates, tracked)
		if err != nil {
			return nil, err
		}
		for i, id := range out.candidates {
			if !seen[i] {
				out.tomb(id, "User")
			}
		}
	}
	me, err := notFoundAsNil(profile())
	if err != nil {
		return nil, err
	}
	if me != nil && (since == nil || int64(me.Rev) != tok.profileRev) {
		out.upsert(viewer, me)
	}
	next := &syncToken{epoch: epoch, issued: t0.Unix()}
	if me != nil {
		next.profileRev = int64(me.Rev)
	}
	if hasMore && since != nil {
		next.issued = tok.issued // what is not delivered yet began then
	}
	for _, w := range works {
		if w.st != nil {
			next.projects = append(next.projects, *w.st)
		}
	}
	return &model.SyncPage{NextToken: s.cursors.SealSync(viewer, !hasMore && streamOK, stream, next.encode()), HasMore: hasMore,
		Upserts: out.nodes(), Tombstones: out.tombs()}, nil
}

// stillSeen reports which of the users who may have stopped being visible
// the viewer still sees (policy.SeesUser), counting only the projects this
// page reads as visible (tracked) and, of each, only a membership of the
// user that began at or before the position the page reads its log up to
// (its entry's born, dynamo.Store.MembershipsBorn). Then viewer and user
// were both members when the page read the viewer's profile, and any
// later loss is met by a later read of that project's log: the user's
// removal lies past this page's read, the viewer's departure past the
// user's born. Anything looser keeps a user for good: a user who joined
// after the viewer left (their born is past the departure, which a leave
// passes over), or shared through a project the token does not follow yet
// (joined after step 1: no leave of it would ever weigh them). A user
// judged gone who is in fact shared comes back with the project's entries
// past the read (their membership's, or the join's whole log). One
// strongly consistent BatchGetItem of membership items, on the pages that
// weigh a user only.
func (l *Loaders) stillSeen(ctx context.Context, ids []string, tracked []*syncWork) ([]bool, error) {
	users, err := l.othersProfiles(ctx, ids)
	if err != nil {
		return nil, err
	}
	viewer := &domain.User{ID: l.viewer, Projects: map[string]string{}} // as the page sees them
	var pairs [][2]string                                               // (project, user) a profile says they share
	var of []int                                                        // the pairs' users
	var in []*syncWork                                                  // the pairs' projects
	for _, w := range tracked {
		viewer.Projects[w.st.id] = ""
		for i, u := range users {
			if policy.SeesProject(u, w.st.id) {
				pairs, of, in = append(pairs, [2]string{w.st.id, ids[i]}), append(of, i), append(in, w)
			}
		}
	}
	born, err := l.store.MembershipsBorn(ctx, pairs)
	if err != nil {
		return nil, err
	}
	kept := make([]*domain.User, len(ids)) // each user as the page may count them: memberships born by its reads
	for j, b := range born {
		if b == 0 || b > in[j].upTo {
			continue
		}
		u := kept[of[j]]
		if u == nil {
			u = &domain.User{ID: ids[of[j]], Projects: map[string]string{}}
			kept[of[j]] = u
		}
		u.Projects[pairs[j][0]] = ""
	}
	seen := make([]bool, len(ids))
	for i, id := range ids {
		seen[i] = policy.SeesUser(l.viewer, viewer, id, kept[i])
	}
	return seen, nil
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

// change applies an entry of a project the viewer sees: a live entry is
// its object's upsert (a comment's, its task's too: its count changed; a
// member's, the user's); a gone one its tombstone (a deleted task's, its
// comments' too; a removed member's, the user's if the viewer shares no
// other project with them), but where the client never had it (at or
// below skip: a join).
func (o *syncOut) change(w *syncWork, c dynamo.Change) {
	tombstone := c.Gone && c.Pos > w.st.skip
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
	if c.Gone && c.Pos <= w.st.skip {
		return
	}
	out := w.st.seen // the removal's position (see page); 0: none
	after := func(born int64) bool { return c.Pos > w.st.skip && out > 0 && born > out }
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

// nodes are the page's upserts: projects, users, tasks, then comments, but
// what is also a tombstone (a task or comment deleted meanwhile).
func (o *syncOut) nodes() []model.Node {
	rank := func(v model.Node) int {
		switch v.(type) {
		case *domain.Project:
			return 0
		case *domain.User:
			return 1
		case *domain.Task:
			return 2
		}
		return 3
	}
	out := make([]model.Node, 0, len(o.order))
	for _, id := range o.order {
		if _, gone := o.tombstones[id]; gone && domain.KindOf(id) != domain.KindUser {
			continue
		}
		out = append(out, o.upserts[id])
	}
	slices.SortStableFunc(out, func(a, b model.Node) int { return rank(a) - rank(b) })
	return out
}

// tombs are the page's tombstones, but users it also upserts (visible
// through another project).
func (o *syncOut) tombs() []*model.Tombstone {
	out := make([]*model.Tombstone, 0, len(o.tombOrder))
	for _, id := range o.tombOrder {
		if _, up := o.upserts[id]; up && domain.KindOf(id) == domain.KindUser {
			continue
		}
		out = append(out, &model.Tombstone{NodeID: id, Typename: o.tombstones[id]})
	}
	return out
}

// String names a project's state, for tests' messages.
func (p projectState) String() string {
	return fmt.Sprintf("%s mode %d pos %d skip %d seen %d", p.id, p.mode, p.pos, p.skip, p.seen)
}
