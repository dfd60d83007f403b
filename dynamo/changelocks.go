package dynamo

// This instance's changes to a project, one at a time (lockProject), and
// the seq it last saw of each project.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// projectLocks serialize this instance's changes to each project: a
// project's changes take its positions one after another (seq), so two
// of this instance's mutations that read the same seq would have one of
// them fail its condition and read again; instead the second waits for the
// first (lockProject). Changes made by other instances still meet as
// conditions that fail, and read again (retryOnChange).
type projectLocks struct {
	mu sync.Mutex
	m  map[string]*projectLock
	// seqs caches each project's seq as this instance last wrote or read
	// it (createTask reads it from here when it can); known counts its
	// entries, which are dropped all at once past maxKnownSeqs.
	seqs  sync.Map // project ULID → int64
	known atomic.Int64
}

// maxKnownSeqs bounds the projects whose seq an instance remembers (about
// 100 bytes each).
const maxKnownSeqs = 100_000

type projectLock struct {
	ch    chan struct{}
	users int
}

// lockProject waits until no other change of this instance to project pu
// runs, or ctx ends (its error, EUNAVAILABLE). Call unlock when the
// change committed or failed.
func (s *Store) lockProject(ctx context.Context, pu string) (unlock func(), err error) {
	ls := &s.locks
	ls.mu.Lock()
	if ls.m == nil {
		ls.m = map[string]*projectLock{}
	}
	l := ls.m[pu]
	if l == nil {
		l = &projectLock{ch: make(chan struct{}, 1)}
		ls.m[pu] = l
	}
	l.users++
	ls.mu.Unlock()
	release := func() {
		ls.mu.Lock()
		if l.users--; l.users == 0 {
			delete(ls.m, pu)
		}
		ls.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, wrap(ctx.Err(), "waiting for the project's other changes")
	}
}

// knownSeq is the project's seq as this instance last saw it (false: not
// known).
func (s *Store) knownSeq(pu string) (int64, bool) {
	v, ok := s.locks.seqs.Load(pu)
	if !ok {
		return 0, false
	}
	return v.(int64), true
}

// noteSeq records what a transaction did to its project's seq: the new
// one once it committed, none known once its condition failed.
func (s *Store) noteSeq(t *txn, err error) {
	if t.log == nil || t.proj == nil {
		return
	}
	switch {
	case err == nil:
		s.rememberSeq(t.log.pu, t.log.to())
	case errors.Is(err, errRetry):
		s.locks.seqs.Delete(t.log.pu)
	}
}

// rememberSeq records project pu's seq as this instance wrote it.
func (s *Store) rememberSeq(pu string, seq int64) {
	ls := &s.locks
	if _, loaded := ls.seqs.Swap(pu, seq); !loaded && ls.known.Add(1) > maxKnownSeqs {
		ls.seqs.Clear()
		ls.known.Store(0)
	}
}
