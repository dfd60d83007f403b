package dynamo

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A backfill gives the items written before a change the attributes that
// the change's writes give every new item: most often the keys of a new
// index (indexes, keys.go), which DynamoDB indexes only on items that
// carry them. It is registered in backfills (keys.go) beside the keys it
// writes; EnsureTable runs those an existing table has not had, after
// creating the indexes it lacks, and marks them all done on a new table.
//
// A run is idempotent, resumable and bounded: it scans the items of its
// types a page at a time, writes each item's attributes with an update
// conditioned on the attributes it computed them from (an item rewritten
// meanwhile was written by a version that sets them itself, and is left
// as it is), skips an item that has them already, keeps its place in its
// marker after each page (META / BACKFILL#<name>: the next page's start,
// then done), so a run stopped anywhere starts again where it stopped, and
// makes at most Store.BackfillRate writes a second.
//
// A joined backfill computes what it writes from other items too (join,
// fill: backfilljoin.go) and has no set; its invariant is violations's.
type backfill struct {
	name  string   // the marker's name; never reused
	types []string // the item types it reads (the type attribute); none: a marker only, done when it runs (leanItemsGate)
	reads []string // the attributes set computes from
	set   func(it item) item

	join       func(it item) []key                                               // the other items fill reads
	fill       func(it item, joined map[key]item) (parts []fillPart, stale bool) // what it sets, from them; stale: a source missing or out of step
	violations func(it plainItem, by func(key) plainItem) []string
}

// DefaultBackfillRate is how many writes a second a backfill makes when
// Store.BackfillRate is 0: well under a table's on-demand start (4,000
// WCU/s) and the 1,000 a partition takes, so the service's own traffic
// keeps its share.
const DefaultBackfillRate = 200

// backfillPage is how many items a backfill's Scan evaluates per page.
const backfillPage = 100

func backfillKey(name string) key { return key{"META", "BACKFILL#" + name} }

// typeBackfillMarker is the type of a backfill's marker.
const typeBackfillMarker = "BACKFILL"

// backfillMarker is the marker of a backfill done.
func backfillMarker(b backfill) item {
	m := backfillKey(b.name).av()
	m["type"] = &types.AttributeValueMemberS{Value: typeBackfillMarker}
	m["done"] = &types.AttributeValueMemberBOOL{Value: true}
	return m
}

// backfillItems gives items of a dump what every backfill gives a
// table's (recount: an import of a dump written before them), and returns
// the markers of them all, done.
func backfillItems(items []item) []item {
	var marks []item
	for _, b := range backfills {
		for _, it := range items {
			if b.set != nil && slices.Contains(b.types, str(it, "type")) { // (a joined backfill's items are rebuilt: recount)
				maps.Copy(it, b.set(it))
			}
		}
		marks = append(marks, backfillMarker(b))
	}
	return marks
}

// RunBackfills runs the backfills the table has not had (backfills, in
// their order). A run stopped by ctx or a failed write returns its error
// and resumes at the next start.
func (s *Store) RunBackfills(ctx context.Context) error {
	for _, b := range backfills {
		if err := s.runBackfill(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// markBackfills marks every backfill done: a new table's items are all
// written by this version.
func (s *Store) markBackfills(ctx context.Context) error {
	for _, b := range backfills {
		if err := s.saveBackfill(ctx, b, nil, true, 0); err != nil {
			return err
		}
	}
	return nil
}

// forgetBackfills deletes the backfills' markers: the embedded store's
// table, made afresh at a start (every marker done), is about to be filled
// from its data file, whose own markers say which backfills its items
// have had (DataFile.Load).
func (s *Store) forgetBackfills(ctx context.Context) error {
	var dels []types.WriteRequest
	for _, b := range backfills {
		dels = append(dels, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: backfillKey(b.name).av()}})
		s.backfilled.Delete(b.name)
	}
	if len(dels) == 0 {
		return nil
	}
	return s.batchWrite(ctx, dels)
}

func (s *Store) runBackfill(ctx context.Context, b backfill) error {
	m, err := s.getOne(ctx, backfillKey(b.name))
	if err != nil {
		return err
	}
	if m != nil && boolOf(m, "done") {
		s.backfilled.Store(b.name, true)
		return nil
	}
	if len(b.types) == 0 { // a marker only (leanItemsGate): nothing to write, it is done once it runs
		s.Log.Info("backfill: done", "backfill", b.name, "written", 0)
		return s.saveBackfill(ctx, b, nil, true, 0)
	}
	sc, ok := s.db.(scanner)
	if !ok {
		return errors.New("dynamo: the backfill " + b.name + " is not done and this client cannot scan")
	}
	var start map[string]types.AttributeValue
	written := 0
	if m != nil && m["nextPK"] != nil {
		start = key{str(m, "nextPK"), str(m, "nextSK")}.av()
		written, _ = strconv.Atoi(numOf(m, "written"))
	}
	s.Log.Info("backfill: giving existing items the attributes this version writes", "backfill", b.name, "resumed", start != nil)
	names, values := typeFilter(b.types)
	pace := s.pacer()
	for {
		page, err := sc.Scan(ctx, &dynamodb.ScanInput{TableName: &s.table, ConsistentRead: aws.Bool(true),
			Limit: aws.Int32(backfillPage), ExclusiveStartKey: start, FilterExpression: aws.String("#t IN (" + names + ")"),
			ExpressionAttributeNames: map[string]string{"#t": "type"}, ExpressionAttributeValues: values})
		if err != nil {
			return wrap(err, "reading the table for a backfill")
		}
		for _, it := range page.Items {
			backfillItem := s.backfillOne
			if b.join != nil {
				backfillItem = s.backfillJoined
			}
			n, err := backfillItem(ctx, b, it, pace)
			if err != nil {
				return err
			}
			written += n
		}
		start = page.LastEvaluatedKey
		if err := s.saveBackfill(ctx, b, start, start == nil, written); err != nil {
			return err
		}
		if start == nil {
			s.Log.Info("backfill: done", "backfill", b.name, "written", written)
			return nil
		}
	}
}

// backfillOne writes one item's attributes unless it has them; it returns
// the writes it made (0 or 1).
func (s *Store) backfillOne(ctx context.Context, b backfill, it item, pace func(context.Context) error) (int, error) {
	attrs := b.set(it)
	if len(attrs) == 0 || has(it, attrs) {
		return 0, nil
	}
	cond := exists()
	for _, a := range b.reads {
		if v, ok := it[a]; ok {
			cond = cond.And(expression.Name(a).Equal(expression.Value(v)))
		} else {
			cond = cond.And(expression.AttributeNotExists(expression.Name(a)))
		}
	}
	var upd expression.UpdateBuilder
	for _, a := range sortedNames(attrs) {
		upd = upd.Set(expression.Name(a), expression.Value(attrs[a]))
	}
	ex, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return 0, internal(err, "building a backfill's write")
	}
	if err := pace(ctx); err != nil {
		return 0, wrap(err, "pacing a backfill")
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{
		Update: &types.Update{TableName: &s.table, Key: keyOf(it).av(), UpdateExpression: ex.Update(),
			ConditionExpression: ex.Condition(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values()}}}})
	var cancelled *types.TransactionCanceledException
	switch {
	case errors.As(err, &cancelled):
		return 0, nil // deleted or rewritten meanwhile, by a writer that sets them
	case err != nil:
		return 0, wrap(err, "a backfill's write")
	}
	return 1, nil
}

// saveBackfill keeps a backfill's place: the key its next page starts at,
// or done.
func (s *Store) saveBackfill(ctx context.Context, b backfill, next map[string]types.AttributeValue, done bool, written int) error {
	m := backfillMarker(b)
	m["done"] = &types.AttributeValueMemberBOOL{Value: done}
	m["written"] = &types.AttributeValueMemberN{Value: strconv.Itoa(written)}
	if next != nil {
		k := keyOf(next)
		m["nextPK"] = &types.AttributeValueMemberS{Value: k.PK}
		m["nextSK"] = &types.AttributeValueMemberS{Value: k.SK}
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: m})
	if err == nil && done {
		s.backfilled.Store(b.name, true)
	}
	return wrap(err, "keeping a backfill's place")
}

// hasBackfill reports whether the backfill b is known done on the table:
// every item of its types has its attributes.
func (s *Store) hasBackfill(b backfill) bool {
	_, ok := s.backfilled.Load(b.name)
	return ok
}

// noteBackfills notes every backfill done: a whole table loaded from a
// dump, given what every backfill gives (backfillItems) with their
// markers.
func (s *Store) noteBackfills() {
	for _, b := range backfills {
		s.backfilled.Store(b.name, true)
	}
}

// pacer returns a wait that lets through at most BackfillRate calls a
// second, on the store's clock (s.Sleep waits).
func (s *Store) pacer() func(context.Context) error {
	rate := s.BackfillRate
	if rate <= 0 {
		rate = DefaultBackfillRate
	}
	gap := time.Second / time.Duration(rate)
	var next time.Time
	return func(ctx context.Context) error {
		now := s.Now()
		if next.IsZero() || now.After(next) {
			next = now
		}
		wait := next.Sub(now)
		next = next.Add(gap)
		if wait <= 0 {
			return nil
		}
		return s.sleep(ctx, wait)
	}
}

func (s *Store) sleep(ctx context.Context, d time.Duration) error {
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func typeFilter(kinds []string) (string, map[string]types.AttributeValue) {
	names := ""
	values := map[string]types.AttributeValue{}
	for i, k := range kinds {
		n := ":t" + strconv.Itoa(i)
		if i > 0 {
			names += ", "
		}
		names += n
		values[n] = &types.AttributeValueMemberS{Value: k}
	}
	return names, values
}

// has reports whether it holds every attribute of attrs with its value.
func has(it, attrs item) bool {
	for a, v := range attrs {
		if !reflect.DeepEqual(it[a], v) {
			return false
		}
	}
	return true
}

func sortedNames(m item) []string { return slices.Sorted(maps.Keys(m)) }

func boolOf(m item, a string) bool {
	v, ok := m[a].(*types.AttributeValueMemberBOOL)
	return ok && v.Value
}

func numOf(m item, a string) string {
	if v, ok := m[a].(*types.AttributeValueMemberN); ok {
		return v.Value
	}
	return "0"
}
