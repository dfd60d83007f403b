package dynamo

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Deleting a project or a task removes, in its transaction, what readers
// reach it by (the project's or task's own item, a task's tag links) and
// writes a cleanup job in the same transaction. The worker then deletes what
// is left under it in batches. Jobs are items, so a stopped server resumes
// them at its next start; every step is idempotent.

const (
	cleanupProject = "PROJECT"
	cleanupTask    = "TASK"
)

func cleanupToItem(kind, target string, now time.Time) item {
	k := cleanupKey(kind, target)
	return marshal(cleanupItem{PK: k.PK, SK: k.SK, Type: typeCleanup, Kind: kind, Target: target, CreatedAt: fmtTime(now)})
}

// cleanupTaskItem is the job of a deleted task tu of project pu.
func cleanupTaskItem(tu, pu string, now time.Time) item {
	k := cleanupKey(cleanupTask, tu)
	return marshal(cleanupItem{PK: k.PK, SK: k.SK, Type: typeCleanup, Kind: cleanupTask, Target: tu, CreatedAt: fmtTime(now), Project: pu})
}

// KickCleanup asks the background work (RunBackground) to run the
// pending cleanup jobs now.
func (s *Store) KickCleanup() {
	select {
	case s.cleanupKick <- struct{}{}:
	default:
	}
}

// RunCleanup runs every pending cleanup job and returns how many it
// finished. A job ends once a pass over what it covers finds nothing left and
// the job is at least CleanupSettle old: the passes read global secondary
// indexes, which on DynamoDB may lag a write by a moment, so a task written
// just before its project was deleted is still found. Returns EUNAVAILABLE,
// EINTERNAL.
func (s *Store) RunCleanup(ctx context.Context) (int, error) {
	done, _, err := s.runCleanup(ctx)
	return done, err
}

// runCleanup is RunCleanup, which also says how many jobs it left for a
// later run.
func (s *Store) runCleanup(ctx context.Context) (done, left int, err error) {
	s.cleanupMu.Lock()
	defer s.cleanupMu.Unlock()
	jobs, err := s.queryAll(ctx, cleanupJobs, cleanupPK)
	if err != nil {
		return 0, 0, err
	}
	for _, it := range jobs {
		job, err := decodeAs[*cleanupItem](it)
		if err != nil {
			return done, len(jobs) - done, err
		}
		rest := 0
		for pass := 0; ; pass++ {
			n, err := s.cleanupPass(ctx, job)
			if err != nil {
				return done, len(jobs) - done, err
			}
			if rest = n; n == 0 || pass == 3 {
				break
			}
		}
		if rest > 0 || s.now().Sub(parseTime(job.CreatedAt)) < s.CleanupSettle {
			continue // look again at the next run
		}
		if job.Kind == cleanupProfile {
			// A profile's job is one item a user's every update rewrites:
			// it ends only if no newer update replaced it while it ran
			// (else the newer profile would never reach the change logs).
			var t txn
			t.del(s.table, keyOf(it), ptr(revIs(job.Rev)), errRetry)
			switch err := s.commit(ctx, &t); {
			case errors.Is(err, errRetry):
				continue // the newer job: the next run
			case err != nil:
				return done, len(jobs) - done, err
			}
			done++
			continue
		}
		if err := s.batchWrite(ctx, []types.WriteRequest{{DeleteRequest: &types.DeleteRequest{Key: keyOf(it).av()}}}); err != nil {
			return done, len(jobs) - done, err
		}
		done++
	}
	return done, len(jobs) - done, nil
}

// cleanupPass deletes what is left under a deleted project or task (and
// gives the project's change log its expiry; deletes the entries of the
// task's comments), or copies a changed profile into the change logs of
// the user's projects, and returns how many items it changed.
func (s *Store) cleanupPass(ctx context.Context, job *cleanupItem) (int, error) {
	switch job.Kind {
	case cleanupTask:
		items, err := s.queryAll(ctx, wholePartition, taskPK(job.Target))
		if err != nil || len(items) == 0 {
			return 0, err
		}
		if job.Project != "" {
			if err := s.dropCommentEntries(ctx, job.Project, items); err != nil {
				return 0, err
			}
		}
		return len(items), s.deleteItems(ctx, items)
	case cleanupProfile:
		return s.copyProfile(ctx, job.Target, job.Rev)
	}
	tasks, err := s.queryAll(ctx, tasksOfProject, projectTasksPK(job.Target))
	if err != nil {
		return 0, err
	}
	total := 0
	for _, t := range tasks {
		n, err := s.deletePartition(ctx, str(t, attrPK))
		if err != nil {
			return total, err
		}
		total += n
	}
	n, err := s.deletePartition(ctx, projectPK(job.Target))
	if err != nil {
		return total + n, err
	}
	e, err := s.expireLog(ctx, job.Target)
	return total + n + e, err
}

// deletePartition deletes every item of a partition of the table and
// returns how many there were.
func (s *Store) deletePartition(ctx context.Context, pk string) (int, error) {
	items, err := s.queryAll(ctx, wholePartition, pk)
	if err != nil || len(items) == 0 {
		return 0, err
	}
	return len(items), s.deleteItems(ctx, items)
}

// deleteItems deletes the items (by their keys).
func (s *Store) deleteItems(ctx context.Context, items []item) error {
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(it).av()}}
	}
	return s.batchWrite(ctx, reqs)
}
