// Package syncer answers Query.sync (docs/sync.md): for the viewer,
// across their projects, what changed since a token. graph's resolver
// calls Page with the operation's loaders; the rest is here:
//
//   - syncer.go: a page, step by step; its token opened (package cursor
//     seals it);
//   - plan.go: which projects a page reads (the viewer's partition: their
//     profile and their sync marks, dynamo.SyncView), and in what state
//     each is (joined, followed, left);
//   - logs.go: the projects' change logs, their entries made upserts and
//     tombstones;
//   - out.go: the page's objects;
//   - users.go: the users who may have stopped being visible;
//   - marks.go: the marks of the projects a page caught up with.
//
// A page reads the viewer's partition (one Query: the profile and the
// marks), then at most Batch projects with the profile's copies of them
// (one BatchGetItem: the visibility check beside the projects' seqs), their
// logs (one Query per project with something to read, all at once), and
// the objects the entries name (one batch). A project whose mark stands at
// the token's position has not changed: it is not read. So a page costs
// what it reads, whatever the number of the viewer's projects. Who may see
// what is package policy's, asked with the facts the page reads.
package syncer

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/model"
)

// DefaultFirst is sync's first when it is not given.
const DefaultFirst = 100

// Batch is how many projects a page reads at most: with the profile, one
// BatchGetItem. The rest waits for the next page (hasMore).
const Batch = 99

// projectCost is the least a project a sync page reads is priced at: a
// project item (up to 41 KB, its description) read for its seq, as a
// project with its fields and its 20 members' ids is priced.
const projectCost = 50

// Cost is a page's price in the complexity limit, before it runs: what
// it may read and answer, its first entries (at most dynamo.MaxFirst),
// each an object of its selection (child), and the projects it reads (at
// most Batch, read whole for their seqs, upserts when joined or changed),
// each priced as an object of its selection and at least as a project
// with its members (projectCost).
func Cost(child int, first *int) int {
	return 1 + child*max(min(loaders.PageSize(first, nil), dynamo.MaxFirst), 1) + Batch*max(child, projectCost)
}

// maxPosition bounds the read of a deleted project's log: nothing is added
// to it any more.
const maxPosition = 999_999_999_999

// Stream is the live stream a final token lets a subscription continue
// (live.Hub): its last sequence.
type Stream interface {
	LastSeq(ctx context.Context) (uint64, error)
}

// Syncer is what Query.sync needs besides the operation's loaders: the
// keys of its tokens, and the live stream's position.
type Syncer struct {
	keys   *cursor.Keys
	stream Stream // nil: no live updates
}

// New returns the Syncer of the tokens keys seals (nil: the process's,
// cursor.Process) and of stream (nil: none, so no token starts a
// subscription).
func New(keys *cursor.Keys, stream Stream) *Syncer {
	if keys == nil {
		keys = cursor.Process()
	}
	return &Syncer{keys: keys, stream: stream}
}

// Page answers one page of Query.sync for l's viewer.
func (s *Syncer) Page(ctx context.Context, l *loaders.Loaders, since *string, first *int) (*model.SyncPage, error) {
	n := DefaultFirst
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
	pg := &pageRun{l: l, view: view, plan: plan, out: newOutput()}
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
	next := &cursor.Sync{Epoch: tok.Epoch, Issued: t0.Unix(), States: pg.states()}
	if me != nil {
		next.ProfileRev = int64(me.Rev)
	}
	if pg.more && since != nil {
		next.Issued = tok.Issued // what is not delivered yet began then
	}
	next.Final, next.StreamSeq = !pg.more && streamOK, stream
	return &model.SyncPage{NextToken: s.keys.SealSync(l.Viewer(), next), HasMore: pg.more,
		Upserts: pg.out.nodes(), Tombstones: pg.out.tombs()}, nil
}

// open reads the token a page continues (since), or makes the empty token
// of a base sync: SERVICE_UNAVAILABLE on a table without change logs,
// BAD_USER_INPUT for anything but this viewer's token, SYNC_TOKEN_EXPIRED
// for one of another epoch or older than the retention.
func (s *Syncer) open(l *loaders.Loaders, since *string) (*cursor.Sync, error) {
	epoch, ok := l.Store().ChangeEpoch()
	if !ok {
		return nil, domain.Errorf(domain.EUNAVAILABLE,
			"sync is not available on this table yet: it was written by a version without the change log (an export and import builds it)")
	}
	if since == nil {
		return &cursor.Sync{Epoch: epoch}, nil
	}
	tok, err := s.keys.OpenSync(l.Viewer(), *since)
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
func (s *Syncer) streamPosition(ctx context.Context) (uint64, bool) {
	if s.stream == nil {
		return 0, false
	}
	seq, err := s.stream.LastSeq(ctx)
	return seq, err == nil
}

// pageRun is one page being made: what it read, the projects' parts,
// and what it answers.
type pageRun struct {
	l    *loaders.Loaders
	view *dynamo.SyncView
	plan pagePlan
	// profile is the viewer's profile (the view's).
	profile *domain.User
	works   []*work
	out     *output
	// more: the page leaves something to read (hasMore).
	more bool
}
