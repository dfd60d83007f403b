package graph

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/taskgraph/taskgraph/live"
)

// Query.sync (docs/sync.md): for the viewer, across their projects, what
// changed since a token. Its code is its own, in the files sync*.go:
//
//   - sync.go: a page, step by step;
//   - syncplan.go: which projects a page reads (the viewer's partition:
//     their profile and their sync marks, dynamo.SyncView), and in what
//     state each is (joined, followed, left);
//   - synclog.go: the projects' change logs, their entries made upserts
//     and tombstones;
//   - syncout.go: the page's objects;
//   - syncusers.go: the users who may have stopped being visible;
//   - syncmark.go: the marks of the projects a page caught up with;
//   - the token: package cursor.
//
// A page reads the viewer's partition (one Query: the profile and the
// marks), then at most syncBatch projects with the profile's copies of them
// (one BatchGetItem: the visibility check beside the projects' seqs), their
// logs (one Query per project with something to read, all at once), and
// the objects the entries name (one batch). A project whose mark stands at
// the token's position has not changed: it is not read. So a page costs
// what it reads, whatever the number of the viewer's projects.

// defaultSyncFirst is sync's first when it is not given.
const defaultSyncFirst = 100

// syncBatch is how many projects a page reads at most: with the profile,
// one BatchGetItem. The rest waits for the next page (hasMore).
const syncBatch = 99

// maxPosition bounds the read of a deleted project's log: nothing is added
// to it any more.
const maxPosition = 999_999_999_999

// syncer is what Query.sync needs besides the request's loaders: the
// sealing of its tokens, and the live stream's position.
type syncer struct {
	cursors *cursor.Keys
	hub     *live.Hub // nil: no live updates
}

func newSyncer(o Options) *syncer {
	if o.Live != nil {
		return &syncer{cursors: o.Live.Cursors(), hub: o.Live}
	}
	return &syncer{cursors: cursor.Process()}
}

// page answers one page of Query.sync.
func (s *syncer) page(ctx context.Context, l *loaders.Loaders, since *string, first *int) (*model.SyncPage, error) {
	n := defaultSyncFirst
	if first != nil {
		n = *first
	}
	if n < 1 || n > dynamo.MaxFirst {
		return nil, domain.Errorf(domain.EINVALID, "first must be between 1 and %d", dynamo.MaxFirst)
	}
	tok, err := s.open(l, since)
	if err != nil {
		return nil, err
	}
	// The stream's position before the visibility read: every change the
	// sync does not see is published after it (projectEvents' after).
	stream, streamOK := s.streamPosition(ctx)
	t0 := l.Now()
	view, err := l.Store().SyncView(ctx, l.Viewer())
	if err != nil {
		return nil, err
	}
	plan := planPage(tok, view)
	pg := &syncPageRun{l: l, view: view, plan: plan, out: newSyncOut()}
	if err := pg.readProjects(ctx); err != nil {
		return nil, err
	}
	share(pg.works, n)
	if err := pg.readLogs(ctx); err != nil {
		return nil, err
	}
	if err := pg.readObjects(ctx); err != nil {
		return nil, err
	}
	if err := pg.weighUsers(ctx); err != nil {
		return nil, err
	}
	me := pg.profile
	if me != nil && (since == nil || int64(me.Rev) != tok.ProfileRev) {
		pg.out.upsert(l.Viewer(), me)
	}
	pg.mark(ctx)
	next := &cursor.Sync{Epoch: tok.Epoch, Issued: t0.Unix(), Projects: pg.states()}
	if me != nil {
		next.ProfileRev = int64(me.Rev)
	}
	if pg.more && since != nil {
		next.Issued = tok.Issued // what is not delivered yet began then
	}
	next.Final, next.StreamSeq = !pg.more && streamOK, stream
	return &model.SyncPage{NextToken: s.cursors.SealSync(l.Viewer(), next), HasMore: pg.more,
		Upserts: pg.out.nodes(), Tombstones: pg.out.tombs()}, nil
}

// open reads the token a page continues (since), or makes the empty token
// of a base sync: SERVICE_UNAVAILABLE on a table without change logs,
// BAD_USER_INPUT for anything but this viewer's token, SYNC_TOKEN_EXPIRED
// for one of another epoch or older than the retention.
func (s *syncer) open(l *loaders.Loaders, since *string) (*cursor.Sync, error) {
	epoch, ok := l.Store().ChangeEpoch()
	if !ok {
		return nil, domain.Errorf(domain.EUNAVAILABLE,
			"sync is not available on this table yet: it was written by a version without the change log (an export and import builds it)")
	}
	if since == nil {
		return &cursor.Sync{Epoch: epoch}, nil
	}
	tok, err := s.cursors.OpenSync(l.Viewer(), *since)
	if err != nil {
		return nil, err
	}
	retention := l.Store().Retention()
	switch {
	case tok.Epoch != epoch:
		return nil, domain.Errorf(domain.EEXPIRED, "the server's change log was rebuilt since this token was issued: sync again with since: null")
	case l.Now().Sub(time.Unix(tok.Issued, 0)) > retention:
		return nil, domain.Errorf(domain.EEXPIRED,
			"this sync token is older than the %d days the server keeps changes for: sync again with since: null", int(retention.Hours()/24))
	}
	return tok, nil
}

// streamPosition is the live stream's last sequence (false: no stream, or
// it could not be read: the token then cannot start a subscription).
func (s *syncer) streamPosition(ctx context.Context) (uint64, bool) {
	if s.hub == nil {
		return 0, false
	}
	seq, err := s.hub.LastSeq(ctx)
	return seq, err == nil
}

// syncPageRun is one page being made: what it read, the projects' parts,
// and what it answers.
type syncPageRun struct {
	l    *loaders.Loaders
	view *dynamo.SyncView
	plan syncPlan
	// profile is the viewer's profile (the view's).
	profile *domain.User
	works   []*syncWork
	out     *syncOut
	// more: the page leaves something to read (hasMore).
	more bool
}
