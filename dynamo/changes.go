package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
		if l.project {
			u = u.Set(expression.Name(attrProjectSeq), expression.Value(l.to()))
		}
		upd, cond, onFail = &u, cond.And(seqIs(l.from)), errRetry
	}
	k := projectKey(a.pu)
	ex, _ := t.build(&cond, upd)
	if upd == nil {
		t.items[a.at] = types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &table, Key: k.av(),
			ConditionExpression: ex.Condition(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values()}}
	} else {
		t.items[a.at] = types.TransactWriteItem{Update: &types.Update{TableName: &table, Key: k.av(),
			UpdateExpression: ex.Update(), ConditionExpression: ex.Condition(), ExpressionAttributeNames: ex.Names(),
			ExpressionAttributeValues: ex.Values()}}
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

// numberOf reads an integer attribute of an item (0 when absent).
func numberOf(m item, attr string) int64 {
	if n, ok := m[attr].(*types.AttributeValueMemberN); ok {
		v, _ := strconv.ParseInt(n.Value, 10, 64)
		return v
	}
	return 0
}

// Changes reads project's change log after position after and at most up
// to upTo, at most limit entries, oldest first (one strongly consistent
// Query), and reports whether more entries lie in that range. The caller
// bounds upTo by a seq it read: entries above it may be visible while an
// earlier one is not yet. Returns EINVALID, EUNAVAILABLE, EINTERNAL.
func (s *Store) Changes(ctx context.Context, projectID string, after, upTo int64, limit int) ([]Change, bool, error) {
	pu, err := domain.ParseProjectID(projectID)
	if err != nil {
		return nil, false, err
	}
	if upTo <= after || limit <= 0 {
		return nil, false, nil
	}
	p := changesOfProject
	kb := expression.KeyAnd(expression.Key(p.pkAttr).Equal(expression.Value(changesPK(pu))),
		expression.KeyBetween(expression.Key(p.skAttr), expression.Value(positionSK(after+1)), expression.Value(positionSK(upTo))))
	ex, err := expression.NewBuilder().WithKeyCondition(kb).Build()
	if err != nil {
		return nil, false, internal(err, "building a query")
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{TableName: &s.table, KeyConditionExpression: ex.KeyCondition(),
		ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values(), ConsistentRead: aws.Bool(true),
		Limit: aws.Int32(int32(limit + 1))})
	if err != nil {
		return nil, false, wrap(err, "reading a change log")
	}
	items := out.Items
	more := len(items) > limit
	if more {
		items = items[:limit]
	}
	cs := make([]Change, 0, len(items))
	for _, it := range items {
		c, ok := decodeChange(it)
		if !ok {
			return nil, false, domain.Errorf(domain.EINTERNAL, "a change log entry of project %s is malformed", projectID)
		}
		cs = append(cs, c)
	}
	return cs, more, nil
}

// decodeChange reads a change log entry.
func decodeChange(m item) (Change, bool) {
	pos, ok := positionOf(str(m, attrSK))
	if !ok || str(m, "type") != typeChange || str(m, "id") == "" {
		return Change{}, false
	}
	c := Change{Pos: pos, Born: numberOf(m, attrBorn), ID: str(m, "id"), At: parseTime(str(m, "at"))}
	if b, ok := m["gone"].(*types.AttributeValueMemberBOOL); ok {
		c.Gone = b.Value
	}
	if s := str(m, "since"); s != "" {
		c.Since = parseTime(s)
	}
	var d decoder
	c.Comments = d.ss(m, "comments")
	for _, n := range d.ss(m, "commentsBorn") {
		b, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return Change{}, false
		}
		c.CommentsBorn = append(c.CommentsBorn, b)
	}
	return c, d.err == nil && len(c.CommentsBorn) == len(c.Comments)
}

// Departure returns the position of the change that last removed user
// from the project, as far as its change log keeps (0: none). Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) Departure(ctx context.Context, projectID, user string) (int64, error) {
	pu, err := domain.ParseProjectID(projectID)
	if err != nil {
		return 0, err
	}
	if err := domain.ValidUserID(user); err != nil {
		return 0, err
	}
	it, err := s.getOne(ctx, departureKey(pu, user))
	if err != nil || it == nil {
		return 0, err
	}
	return numberOf(it, "pos"), nil
}

// MembershipsBorn reads, for each pair of a project and a user, where the
// user's current membership of the project began in the project's change
// log (its entry's born; 0: no membership), in one strongly consistent
// BatchGetItem per 100 pairs. Returns EINVALID, EUNAVAILABLE.
func (s *Store) MembershipsBorn(ctx context.Context, pairs [][2]string) ([]int64, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	keys := make([]key, len(pairs))
	for i, pr := range pairs {
		pu, err := domain.ParseProjectID(pr[0])
		if err != nil {
			return nil, err
		}
		if err := domain.ValidUserID(pr[1]); err != nil {
			return nil, err
		}
		keys[i] = memberKey(pu, pr[1])
	}
	items, err := s.getItems(WithConsistency(ctx, SyncRead), keys)
	if err != nil {
		return nil, err
	}
	born := make([]int64, len(pairs))
	for i, it := range items {
		if it != nil {
			born[i] = entryOf(it).born
		}
	}
	return born, nil
}

// ProjectSeq reads a project's seq, the last position of its change log,
// strongly consistently (0 for a project that does not exist). Returns
// EINVALID, EUNAVAILABLE.
func (s *Store) ProjectSeq(ctx context.Context, projectID string) (int64, error) {
	pu, err := domain.ParseProjectID(projectID)
	if err != nil {
		return 0, err
	}
	k := projectKey(pu)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k.av(), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String(attrSeq)})
	if err != nil {
		return 0, wrap(err, "reading a project")
	}
	return numberOf(out.Item, attrSeq), nil
}

// commentRef is a comment of a deleted task, for its gone entry.
type commentRef struct {
	id   string
	born int64
}

// commentsOf reads a task's comments' ids and when they were born (a
// Query of the task's partition's comments).
func (s *Store) commentsOf(ctx context.Context, tu string) ([]commentRef, error) {
	items, err := s.queryAll(ctx, commentsOfTask, taskPK(tu))
	if err != nil {
		return nil, err
	}
	refs := make([]commentRef, 0, len(items))
	for _, it := range items {
		if id := str(it, "id"); id != "" {
			refs = append(refs, commentRef{id: id, born: entryOf(it).born})
		}
	}
	return refs, nil
}

// ChangeEpoch returns the epoch of the table's change logs, which changes
// when they are rebuilt (an import), and false for a table without them
// (written by a version without the change log: sync needs an export and
// import first).
func (s *Store) ChangeEpoch() (string, bool) {
	e := s.changeEpoch.Load()
	if e == nil {
		return "", false
	}
	return *e, true
}

func (s *Store) setChangeEpoch(e string) {
	if e == "" {
		s.changeEpoch.Store(nil)
		return
	}
	s.changeEpoch.Store(&e)
}

// changeLogMarker is the marker of a table whose change logs are complete,
// with a new epoch (random), or the epoch of a new, empty table.
func changeLogMarker(epoch string) item {
	if epoch == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		epoch = hex.EncodeToString(b[:])
	}
	it := changeLogKey.av()
	it["type"] = &types.AttributeValueMemberS{Value: typeChangeMarker}
	it["epoch"] = &types.AttributeValueMemberS{Value: epoch}
	return it
}

// newTableEpoch is the epoch of a table created empty: the same for every
// new table, so that a journal replayed over a new table (whose marker no
// journal holds) ends in the table it recorded. A client's token of
// another table names projects this one lacks: their tombstones follow.
const newTableEpoch = "new"

// DetectChangeLog reads the table's marker of complete change logs (and
// their epoch), which EnsureTable writes into a new table and an import
// into a rebuilt one. Returns EUNAVAILABLE.
func (s *Store) DetectChangeLog(ctx context.Context) error {
	it, err := s.getOne(ctx, changeLogKey)
	if err != nil {
		return err
	}
	s.setChangeEpoch(str(it, "epoch"))
	if it == nil {
		s.Log.Warn("this table was written by a version without the change log: sync answers SERVICE_UNAVAILABLE until an export and import builds it (docs/operations.md)")
	}
	return nil
}

// markChangeLog writes the marker of complete change logs into a new,
// empty table.
func (s *Store) markChangeLog(ctx context.Context) error {
	m := changeLogMarker(newTableEpoch)
	err := s.batchWrite(ctx, []types.WriteRequest{{PutRequest: &types.PutRequest{Item: m}}})
	if err == nil {
		s.setChangeEpoch(str(m, "epoch"))
	}
	return err
}

// SweepChanges deletes the change log items whose expiry has passed: one
// Query of each of the sweep's GSI2 partitions, then BatchWriteItem. On
// AWS the table's TTL deletes them too; the embedded store has none. It
// returns how many it deleted. Returns EUNAVAILABLE, EINTERNAL.
func (s *Store) SweepChanges(ctx context.Context) (int, error) {
	before := expirySK(s.now().Unix())
	shards := make([][]key, expiryShards)
	err := s.forEachChunk(ctx, expiryShards, 1, func(ctx context.Context, lo, _ int) error {
		p := expiredChanges
		kb := expression.KeyAnd(expression.Key(p.pkAttr).Equal(expression.Value(expiryPrefix+strconv.Itoa(lo))),
			expression.KeyLessThan(expression.Key(p.skAttr), expression.Value(before)))
		ex, err := expression.NewBuilder().WithKeyCondition(kb).
			WithProjection(expression.NamesList(expression.Name(attrPK), expression.Name(attrSK))).Build()
		if err != nil {
			return internal(err, "building a query")
		}
		in := &dynamodb.QueryInput{TableName: &s.table, IndexName: aws.String(p.index), KeyConditionExpression: ex.KeyCondition(),
			ProjectionExpression: ex.Projection(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values()}
		q := dynamodb.NewQueryPaginator(s.db, in)
		for q.HasMorePages() {
			res, err := q.NextPage(ctx)
			if err != nil {
				return wrap(err, "reading the expired changes")
			}
			for _, it := range res.Items {
				shards[lo] = append(shards[lo], keyOf(it))
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	keys := slices.Concat(shards...)
	if len(keys) == 0 {
		return 0, nil
	}
	return len(keys), s.deleteKeys(ctx, keys)
}

// expireLog gives every item of a deleted project's change log that has
// none an expiry, from now (the cleanup of the project): members offline
// when it was deleted still get the tombstones of everything in it until
// their tokens expire. It returns how many items it changed.
func (s *Store) expireLog(ctx context.Context, pu string) (int, error) {
	items, err := s.queryAll(ctx, wholePartition, changesPK(pu))
	if err != nil {
		return 0, err
	}
	now := s.now()
	var reqs []types.WriteRequest
	for _, it := range items {
		if _, ok := it[TTLAttribute]; ok {
			continue
		}
		var pk, sk string
		var exp int64
		s.expire(&pk, &sk, &exp, keyOf(it), now)
		it[attrGSI2PK], it[attrGSI2SK] = &types.AttributeValueMemberS{Value: pk}, &types.AttributeValueMemberS{Value: sk}
		it[TTLAttribute] = &types.AttributeValueMemberN{Value: strconv.FormatInt(exp, 10)}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	return len(reqs), s.batchWrite(ctx, reqs)
}

// dropCommentEntries deletes the entries of a deleted task's comments
// (items: what was left of the task's partition) from its project's log;
// the task's own gone entry names them.
func (s *Store) dropCommentEntries(ctx context.Context, pu string, items []item) error {
	var keys []key
	for _, it := range items {
		if str(it, "type") == typeComment {
			if pos := numberOf(it, attrSyncSeq); pos > 0 {
				keys = append(keys, changeKey(pu, pos))
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return s.deleteKeys(ctx, keys)
}

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

// typeChangeMarker is the type of the marker of complete change logs.
const typeChangeMarker = "CHANGELOG"

// changeLogItems returns the change log items of items, a whole table (a
// dump): as they are when they are complete and in step with the objects
// (a dump of this version: positions, and the clients' tokens, survive an
// export and import or a restart of the embedded store), else built afresh
// with a new epoch (a dump of a version without the change log, or one
// whose journal such a version wrote): every object of an existing project
// gets an entry of its own, members first, then tasks, then comments, and
// the objects' and projects' positions are set in place.
func changeLogItems(items []item) (log []item, epoch string) {
	if log, epoch, ok := changeLogInStep(items); ok {
		return log, epoch
	}
	fresh := true // nothing to log: the marker of a new table
	for _, it := range items {
		if t := str(it, "type"); t == typeProject || t == typeMember || t == typeTask || t == typeComment {
			fresh = false
			break
		}
	}
	if fresh {
		m := changeLogMarker(newTableEpoch)
		return []item{m}, newTableEpoch
	}
	projects := map[string]item{} // ULID → item
	var members, tasks, comments []item
	taskProject := map[string]string{} // task id → project ULID
	for _, it := range items {
		switch str(it, "type") {
		case typeProject:
			projects[ulidOf(str(it, "id"))] = it
		case typeMember:
			members = append(members, it)
		case typeTask:
			tasks = append(tasks, it)
			taskProject[str(it, "id")] = ulidOf(str(it, "projectId"))
		case typeComment:
			comments = append(comments, it)
		}
	}
	seq := map[string]int64{}
	byID := func(attr string) func(a, b item) int {
		return func(a, b item) int { return compareStrings(str(a, attr), str(b, attr)) }
	}
	add := func(pu string, obj item, id, at, since string) {
		if projects[pu] == nil {
			delete(obj, attrSyncSeq)
			delete(obj, attrBorn)
			return
		}
		seq[pu]++
		k := changeKey(pu, seq[pu])
		log = append(log, marshal(changeItem{PK: k.PK, SK: k.SK, Type: typeChange, ID: id, At: at, Since: since, Born: seq[pu]}))
		withEntry(obj, entryAt{pos: seq[pu], born: seq[pu]})
	}
	slices.SortFunc(members, byID("userId"))
	for _, m := range members {
		delete(m, attrProfileRev)
		add(ulidOf(str(m, "projectId")), m, str(m, "userId"), str(m, "joinedAt"), str(m, "joinedAt"))
	}
	slices.SortFunc(tasks, byID("id"))
	for _, t := range tasks {
		add(ulidOf(str(t, "projectId")), t, str(t, "id"), str(t, "updatedAt"), "")
	}
	slices.SortFunc(comments, byID("id"))
	for _, c := range comments {
		add(taskProject[str(c, "taskId")], c, str(c, "id"), str(c, "createdAt"), "")
	}
	for pu, p := range projects {
		n := &types.AttributeValueMemberN{Value: strconv.FormatInt(seq[pu], 10)}
		p[attrSeq], p[attrProjectSeq] = n, n
	}
	m := changeLogMarker("")
	return append(log, m), str(m, "epoch")
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// changeLogInStep returns the change log items of items (a whole table)
// and their epoch when the table has the marker and every object of an
// existing project has an entry of its own at the position it records,
// below its project's seq.
func changeLogInStep(items []item) (log []item, epoch string, ok bool) {
	projects := map[string]int64{} // ULID → seq
	entries := map[key]item{}
	taskProject := map[string]string{}
	for _, it := range items {
		switch str(it, "type") {
		case typeChangeMarker:
			epoch = str(it, "epoch")
			log = append(log, it)
		case typeChange, typeLeft:
			log = append(log, it)
			entries[keyOf(it)] = it
		case typeProject:
			projects[ulidOf(str(it, "id"))] = numberOf(it, attrSeq)
		case typeTask:
			taskProject[str(it, "id")] = ulidOf(str(it, "projectId"))
		}
	}
	if epoch == "" {
		return nil, "", false
	}
	for k := range entries {
		pu := k.PK[len(changesPrefix):]
		if pos, isEntry := positionOf(k.SK); isEntry {
			if seq, live := projects[pu]; live && pos > seq {
				return nil, "", false
			}
		}
	}
	for _, it := range items {
		var pu, id string
		switch str(it, "type") {
		case typeMember:
			pu, id = ulidOf(str(it, "projectId")), str(it, "userId")
		case typeTask:
			pu, id = ulidOf(str(it, "projectId")), str(it, "id")
		case typeComment:
			pu, id = taskProject[str(it, "taskId")], str(it, "id")
		default:
			continue
		}
		if _, live := projects[pu]; !live {
			continue
		}
		e := entries[changeKey(pu, numberOf(it, attrSyncSeq))]
		if e == nil || str(e, "id") != id || e["gone"] != nil {
			return nil, "", false
		}
	}
	return log, epoch, true
}
