package dynamo

import (
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// The change log (docs/sync.md). Every project has a sequence, seq on its
// item, and a log, a partition of its own (changesPK) holding one entry per
// object of the project (a task, a comment, a member) at the position of
// that object's last change; the object's item holds that position
// (syncSeq). A mutation takes the next positions in its own transaction:
// the project's action (a check or an update it makes anyway) becomes an
// update of seq on the condition that seq is still the value read, and the
// transaction deletes each changed object's old entry and puts the new one.
// A transaction that takes position n+1 commits only after the one that
// took n, so every entry at or below a seq read strongly consistently is
// committed: a sync that reads the project, then its log up to that seq,
// misses nothing. The log is compacted (an object has one entry), so the
// log above a position is what changed since, each object once, and the
// whole log is everything in the project.
//
// A deleted object's entry is gone (a tombstone) and expires after the
// retention (Store.SyncRetention) and a margin; so does every entry of a
// deleted project once its cleanup job ran. Expiring items carry the
// table's TTL attribute and the sweep's keys in GSI2 (SweepChanges).

// Attributes of the change log on other items.
const (
	attrSeq        = "seq"        // project: its last position
	attrSeqAt      = "seqAt"      // project: when the change at seq was made
	attrProjectSeq = "projectSeq" // project: the position of its own last change
	attrSyncSeq    = "syncSeq"    // task, comment, membership: the position of its entry
	attrBorn       = "born"       // task, comment, membership: the position of its first entry (when it was made)
	attrProfileRev = "profileRev" // membership: the profile rev its entry stands for
)

const (
	// DefaultSyncRetention is how long the change log keeps what was
	// deleted, and the oldest sync token accepted: the contract's 30 days.
	DefaultSyncRetention = 30 * 24 * time.Hour
	// expiryMargin is kept beyond the retention, for clocks.
	expiryMargin = 24 * time.Hour
	// cleanupProfile is the kind of job that copies a changed profile into
	// the change logs of the user's projects.
	cleanupProfile = "PROFILE"
)

// Retention returns how long deletions are kept in the change log
// (SyncRetention, or DefaultSyncRetention).
func (s *Store) Retention() time.Duration {
	if s.SyncRetention > 0 {
		return s.SyncRetention
	}
	return DefaultSyncRetention
}

// Change is one entry of a project's change log.
type Change struct {
	// Pos is its position; ID the object's id: a task's, a comment's, or
	// a member's user id; Born the position of the object's first entry:
	// it was made (the member added) by the change at that position.
	Pos, Born int64
	ID        string
	// Gone: the change deleted the object (removed the member).
	Gone bool
	// At is when the change was made; Since, for a member, when the
	// membership began.
	At, Since time.Time
	// Comments are a deleted task's comments' ids, CommentsBorn their
	// Born.
	Comments     []string
	CommentsBorn []int64
}

// entryAt is where an object's entry stands: its position, and the
// position of its first one (born), as its item records them (entryOf,
// withEntry). The zero value: no entry yet.
type entryAt struct{ pos, born int64 }

// entryOf reads an object's entry from its item (an item of a version that
// did not record born counts as born at its position).
func entryOf(it item) entryAt {
	e := entryAt{pos: numberOf(it, attrSyncSeq), born: numberOf(it, attrBorn)}
	if e.born == 0 {
		e.born = e.pos
	}
	return e
}

// withEntry records an object's entry on its item.
func withEntry(it item, e entryAt) item {
	it[attrSyncSeq] = &types.AttributeValueMemberN{Value: strconv.FormatInt(e.pos, 10)}
	it[attrBorn] = &types.AttributeValueMemberN{Value: strconv.FormatInt(e.born, 10)}
	return it
}

// changeLog is what one transaction writes to a project's change log:
// positions from+1 … from+n, and whether the project itself changed.
type changeLog struct {
	pu      string
	from, n int64
	project bool
	at      time.Time
}

// projectAction is a transaction's one action on its project's item, a
// check or an update: made at commit (finish), with the change log's
// sequence.
type projectAction struct {
	at     int
	pu     string
	cond   expression.ConditionBuilder
	upd    *expression.UpdateBuilder
	onFail error
}

// onProject adds the transaction's action on project pu's item: the
// condition, and the update if any (nil: a check). With a change log
// (logTo), the action also takes its positions on the condition that the
// project's seq is the one read; its failure is then errRetry.
func (t *txn) onProject(pu string, cond expression.ConditionBuilder, upd *expression.UpdateBuilder, onFail error) {
	if t.proj != nil {
		if t.err == nil {
			t.err = domain.Errorf(domain.EINTERNAL, "two actions on one project in a transaction")
		}
		return
	}
	t.proj = &projectAction{at: len(t.items), pu: pu, cond: cond, upd: upd, onFail: onFail}
	t.items = append(t.items, types.TransactWriteItem{})
	t.fails = append(t.fails, onFail)
}

// logTo starts the transaction's change log: project pu's, whose seq was
// read as from; at is the change's time.
func (t *txn) logTo(pu string, from int64, at time.Time) {
	t.log = &changeLog{pu: pu, from: from, at: at.UTC()}
}

// logProject records that the project itself changes (its fields, its
// task counts or its members): its projectSeq moves.
func (t *txn) logProject() {
	if t.log != nil {
		t.log.project = true
	}
}

// seqIs is the condition that a project's seq is n (absent counts as 0).
func seqIs(n int64) expression.ConditionBuilder {
	c := expression.Name(attrSeq).Equal(expression.Value(n))
	if n == 0 {
		c = expression.AttributeNotExists(expression.Name(attrSeq)).Or(c)
	}
	return c
}

// to is the project's seq once the transaction commits.
func (l *changeLog) to() int64 {
	if l.n == 0 && l.project {
		return l.from + 1 // the project's own change takes a position
	}
	return l.from + l.n
}

// finish makes the project's action (onProject), with the change log's
// positions. commit calls it.
func (t *txn) finish(table string) {
	a := t.proj
	if a == nil || t.err != nil {
		return
	}
	cond, upd, onFail := a.cond, a.upd, a.onFail
	if l := t.log; l != nil && l.pu == a.pu && (l.n > 0 || l.project) {
		u := expression.Set(expression.Name(attrSeq), expression.Value(l.to()))
		if upd != nil {
			u = upd.Set(expression.Name(attrSeq), expression.Value(l.to()))
		}
		u = u.Set(expression.Name(attrSeqAt), expression.Value(fmtTime(l.at)))
		if l.project {
			u = u.Set(expression.Name(attrProjectSeq), expression.Value(l.to()))
		}
		// No sync mark may survive a change (syncmark.go): a project with
		// marks fails, returns its item, and commit unmarks it first.
		upd, cond, onFail = &u, cond.And(seqIs(l.from)).And(unmarked()), errRetry
	}
	k := projectKey(a.pu)
	ex, _ := t.build(&cond, upd)
	if upd == nil {
		t.items[a.at] = types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &table, Key: k.av(),
			ConditionExpression: ex.Condition(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values()}}
	} else {
		t.items[a.at] = types.TransactWriteItem{Update: &types.Update{TableName: &table, Key: k.av(),
			UpdateExpression: ex.Update(), ConditionExpression: ex.Condition(), ExpressionAttributeNames: ex.Names(),
			ExpressionAttributeValues: ex.Values(), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}
	}
	t.fails[a.at] = onFail
}

// logChange adds to t the new entry of object id (a task, a comment, or a
// member's user id) at the log's next position, and the deletion of its
// old entry (the zero entryAt: a new object, born here); since is a
// member's joinedAt. It returns the new entry, which the object's item
// records (withEntry).
func (s *Store) logChange(t *txn, id string, old entryAt, since *time.Time) entryAt {
	return s.logEntry(t, changeItem{ID: id}, old, since)
}

// logGone adds to t the entry of object id deleted (a member removed) at
// the log's next position, with its expiry, and the deletion of its old
// entry; comments are a deleted task's comments (their ids and when they
// were born), since a removed member's joinedAt.
func (s *Store) logGone(t *txn, id string, old entryAt, comments []commentRef, since *time.Time) entryAt {
	e := changeItem{ID: id, Gone: true}
	for _, c := range comments { // none: the attributes are left out (the embedded store garbles empty lists)
		e.Comments = append(e.Comments, c.id)
		e.CommentsBorn = append(e.CommentsBorn, c.born)
	}
	return s.logEntry(t, e, old, since)
}

func (s *Store) logEntry(t *txn, e changeItem, old entryAt, since *time.Time) entryAt {
	l := t.log
	l.n++
	pos := l.from + l.n
	if old.pos > l.from && t.err == nil {
		// The object was read after a change the project's read did not
		// see (its entry lies beyond the seq read): read both again. (Its
		// old and new positions could otherwise be one key.)
		t.err = errRetry
	}
	if old.pos > 0 {
		t.del(s.table, changeKey(l.pu, old.pos), nil, nil)
	}
	born := old.born
	if born == 0 {
		born = pos
	}
	k := changeKey(l.pu, pos)
	e.PK, e.SK, e.Type, e.At, e.Born = k.PK, k.SK, typeChange, fmtTime(l.at), born
	if since != nil {
		e.Since = fmtTime(*since)
	}
	if e.Gone {
		s.expire(&e.GSI2PK, &e.GSI2SK, &e.ExpiresAt, k, l.at)
	}
	t.put(s.table, marshal(e), nil, nil)
	return entryAt{pos: pos, born: born}
}

// logDeparture adds to t the departure of user u from the log's project,
// removed by the change at position pos.
func (s *Store) logDeparture(t *txn, u string, pos int64) {
	l := t.log
	k := departureKey(l.pu, u)
	it := leftItem{PK: k.PK, SK: k.SK, Type: typeLeft, User: u, At: fmtTime(l.at), Pos: pos}
	s.expire(&it.GSI2PK, &it.GSI2SK, &it.ExpiresAt, k, l.at)
	t.put(s.table, marshal(it), nil, nil)
}

// expire sets an expiring item's expiry, from the time it may go, and its
// keys of the sweep.
func (s *Store) expire(pk, sk *string, expiresAt *int64, k key, from time.Time) {
	*expiresAt = from.Add(s.Retention() + expiryMargin).Unix()
	*pk, *sk = expiryPK(k), expirySK(*expiresAt)
}
