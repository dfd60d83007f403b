package dynamo

// A changed profile, copied into the change logs of its user's projects
// by the cleanup worker.

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/taskgraph/taskgraph/domain"
)

// profileJob is the job that copies a changed profile (rev) into the change
// logs of the user's projects, written in the profile's transaction.
func profileJob(u string, rev int, now time.Time) item {
	k := cleanupKey(cleanupProfile, u)
	return marshal(cleanupItem{PK: k.PK, SK: k.SK, Type: typeCleanup, Kind: cleanupProfile, Target: u, CreatedAt: fmtTime(now), Rev: rev})
}

// copyProfile moves user u's member entry in each of their projects whose
// membership stands for a profile rev before rev (one transaction each),
// and returns how many it moved (or found moved meanwhile, as work still to
// check). The memberships are listed through GSI1, which may lag a new
// one: the job is run again until it settles (RunCleanup).
func (s *Store) copyProfile(ctx context.Context, u string, rev int) (int, error) {
	ms, err := s.queryAll(ctx, projectsOfUser, userProjectsPK(u))
	if err != nil {
		return 0, err
	}
	var stale []item
	var keys []key
	for _, m := range ms {
		if numberOf(m, attrProfileRev) < int64(rev) {
			stale = append(stale, m)
			keys = append(keys, projectKey(ulidOf(str(m, "projectId"))))
		}
	}
	if len(stale) == 0 {
		return 0, nil
	}
	projects, err := s.getItems(ctx, keys)
	if err != nil {
		return 0, err
	}
	moved := 0
	for i, m := range stale {
		if projects[i] == nil {
			continue // a deleted project: its log only expires now
		}
		pu := ulidOf(str(m, "projectId"))
		old := entryOf(m)
		since := parseTime(str(m, "joinedAt"))
		unlock, err := s.lockProject(ctx, pu)
		if err != nil {
			return moved, err
		}
		seq, err := s.ProjectSeq(ctx, domain.ProjectIDOf(pu))
		if err != nil {
			unlock()
			return moved, err
		}
		var t txn
		t.logTo(pu, seq, s.now())
		t.onProject(pu, exists(), nil, errRetry)
		e := s.logChange(&t, u, old, &since)
		cond := exists().And(expression.Name(attrSyncSeq).Equal(expression.Value(old.pos)))
		if old.pos == 0 {
			cond = exists().And(expression.AttributeNotExists(expression.Name(attrSyncSeq)))
		}
		t.update(s.table, memberKey(pu, u), expression.Set(expression.Name(attrSyncSeq), expression.Value(e.pos)).
			Set(expression.Name(attrBorn), expression.Value(e.born)).Set(expression.Name(attrProfileRev), expression.Value(rev)), &cond, errRetry)
		err = s.commit(ctx, &t)
		unlock()
		switch {
		case err == nil:
		case errors.Is(err, errRetry): // the project or the membership changed meanwhile: the next pass sees it again
		default:
			return moved, err
		}
		moved++
	}
	return moved, nil
}
