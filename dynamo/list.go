package dynamo

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
)

// Paged reads of a pattern: one page of one or more partitions merged
// into one order, read on past the items a filter drops until the page is
// full, written once for every pattern.

// Keep tells, for a batch of candidate items in the order they were read,
// which ones the viewer may see. It may read (through the caller's loaders)
// to decide.
type Keep func(ctx context.Context, candidates []item) ([]bool, error)

// listSpec describes a list read: one or more partitions of a pattern, each
// sorted by the same sort key, merged into one order. Make one with
// pattern.of.
type listSpec struct {
	pattern
	pks    []string // partitions to merge; sort keys are unique across them
	before string   // optional exclusive upper bound of sort keys
	filter *expression.ConditionBuilder
	keep   Keep
}

// source is one partition's Query in a list's read: its input (the next
// read's start key), the items read and not yet merged, whether it is read
// to its end, and how many reads it has made.
type source struct {
	in        *dynamodb.QueryInput
	buf       []item
	exhausted bool
	fetches   int
}

// list reads one page of a list: the first page.First items after the
// cursor After (or, with page.Last, the last items before the cursor
// Before; each cursor bounds either direction) that pass the filter and
// keep, and whether more remain beyond the page's far end. A backward page
// reads the partitions in the opposite order (ScanIndexForward), at the
// same cost, and is returned in the list's order. It reads on until it has
// one item more than the page or the partitions are exhausted, so a page is
// never short or empty while items remain.
func (s *Store) list(ctx context.Context, spec listSpec, page domain.Page) (*domain.Conn[item], error) {
	size, back, err := pageSize(page)
	if err != nil {
		return nil, err
	}
	if spec.cursor == nil {
		return nil, domain.Errorf(domain.EINTERNAL, "reading a list of a pattern that is not paged")
	}
	after, err := cursorArg("after", page.After, spec.cursor)
	if err != nil {
		return nil, err
	}
	before, err := cursorArg("before", page.Before, spec.cursor)
	if err != nil {
		return nil, err
	}
	lo, hi := spec.keyRange(after, before)
	r := &listRead{skAttr: spec.skAttr, desc: spec.desc != back, want: size + 1, start: after,
		drop: func(sk string) bool { return sk == after || sk == before || sk == spec.before }}
	if back {
		r.start = before
	}
	out := &domain.Conn[item]{}
	if lo > hi || len(spec.pks) == 0 {
		return out, nil
	}
	if r.srcs, err = s.listSources(ctx, spec, lo, hi, r.desc); err != nil {
		return nil, err
	}
	kept, err := s.readOn(ctx, spec.keep, r)
	if err != nil {
		return nil, err
	}
	more := len(kept) > size
	out.Items = kept[:min(len(kept), size)]
	if back {
		slices.Reverse(out.Items)
		out.HasPrev = more
	} else {
		out.HasNext = more
	}
	out.Cursors = make([]string, len(out.Items))
	for i, it := range out.Items {
		out.Cursors[i] = cursor.List(str(it, spec.skAttr))
	}
	return out, nil
}

// keyRange is the range of sort keys a page of the list reads, lo to hi
// (inclusive): the pattern's prefix, below spec.before, between the
// cursors after and before.
func (spec listSpec) keyRange(after, before string) (lo, hi string) {
	lo, hi = spec.prefix, spec.prefix+rangeEnd
	if spec.before != "" {
		hi = spec.before
	}
	// In sort-key order, a list's cursors bound it the other way round when
	// the list is descending.
	low, high := after, before
	if spec.desc {
		low, high = before, after
	}
	if low != "" {
		lo = max(lo, low)
	}
	if high != "" {
		hi = min(hi, high)
	}
	return lo, hi
}

// listSources makes the Query of each partition of the list: its sort
// keys from lo to hi, the list's filter, in descending order if desc.
func (s *Store) listSources(ctx context.Context, spec listSpec, lo, hi string, desc bool) ([]*source, error) {
	names, filter, filterValues, err := spec.filterExpr()
	if err != nil {
		return nil, err
	}
	srcs := make([]*source, len(spec.pks))
	for i, pk := range spec.pks {
		values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk},
			":lo": &types.AttributeValueMemberS{Value: lo}, ":hi": &types.AttributeValueMemberS{Value: hi}}
		maps.Copy(values, filterValues)
		in := &dynamodb.QueryInput{TableName: &s.table, KeyConditionExpression: aws.String(keyBetween),
			FilterExpression: filter, ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ScanIndexForward: aws.Bool(!desc)}
		if spec.index != "" {
			in.IndexName = aws.String(spec.index)
		} else {
			in.ConsistentRead = aws.Bool(strong(ctx))
		}
		srcs[i] = &source{in: in}
	}
	return srcs, nil
}

// listRead is a page's read in progress: the Queries of its partitions,
// merged into one order.
type listRead struct {
	srcs   []*source
	skAttr string
	desc   bool // the partitions are read in descending sort-key order
	want   int  // the items the page reads: its size and one more
	// start is the cursor the read starts from: its own item, read and
	// dropped, takes one place of the first read's Limit.
	start string
	drop  func(sk string) bool // the cursors' and the bound's own items
}

// readOn reads and merges the partitions until it has kept r.want items
// that pass keep, or read them all.
func (s *Store) readOn(ctx context.Context, keep Keep, r *listRead) ([]item, error) {
	var kept []item
	for {
		if err := s.refill(ctx, r); err != nil {
			return nil, err
		}
		cand := r.merge(r.want - len(kept))
		if keep != nil && len(cand) > 0 {
			ok, err := keep(ctx, cand)
			if err != nil {
				return nil, err
			}
			for i, c := range cand {
				if ok[i] {
					kept = append(kept, c)
				}
			}
		} else {
			kept = append(kept, cand...)
		}
		if len(kept) >= r.want || r.done() {
			return kept, nil
		}
	}
}

// refill refills every source whose buffer ran dry, all at once. A
// source's first read asks for the page's want, each further one for
// twice the last (up to 16 times, and 1,000 items).
func (s *Store) refill(ctx context.Context, r *listRead) error {
	var need []*source
	for _, src := range r.srcs {
		if len(src.buf) == 0 && !src.exhausted {
			need = append(need, src)
		}
	}
	return s.parallel(ctx, len(need), func(ctx context.Context, i int) error {
		src := need[i]
		limit := r.want << min(src.fetches, 4)
		if src.fetches == 0 && r.start != "" {
			limit++
		}
		src.in.Limit = aws.Int32(int32(min(limit, 1000)))
		res, err := s.db.Query(ctx, src.in)
		if err != nil {
			return wrap(err, "reading a list")
		}
		src.fetches++
		for _, it := range res.Items {
			if !r.drop(str(it, r.skAttr)) {
				src.buf = append(src.buf, it)
			}
		}
		src.in.ExclusiveStartKey = res.LastEvaluatedKey
		src.exhausted = len(res.LastEvaluatedKey) == 0
		return nil
	})
}

// merge takes up to n items in the list's order: the smallest (largest)
// head while every source that may still hold items has one buffered.
func (r *listRead) merge(n int) []item {
	var cand []item
	for len(cand) < n {
		var best *source
		ready := true
		for _, src := range r.srcs {
			if len(src.buf) == 0 {
				if !src.exhausted {
					ready = false
				}
				continue
			}
			if best == nil {
				best = src
				continue
			}
			a, b := str(src.buf[0], r.skAttr), str(best.buf[0], r.skAttr)
			if (a < b) != r.desc {
				best = src
			}
		}
		if !ready || best == nil {
			break
		}
		cand = append(cand, best.buf[0])
		best.buf = best.buf[1:]
	}
	return cand
}

// done tells whether every source is read to its end and merged.
func (r *listRead) done() bool {
	for _, src := range r.srcs {
		if len(src.buf) > 0 || !src.exhausted {
			return false
		}
	}
	return true
}

// filterExpr returns the attribute names of the list's Query (the key
// schema's, and the filter's if any), its filter expression and the
// filter's values. The expression builder names its placeholders #0, :0,
// …, which never collide with the key conditions' own.
func (spec listSpec) filterExpr() (names map[string]string, filter *string, values map[string]types.AttributeValue, err error) {
	names = spec.names()
	if spec.filter == nil {
		return names, nil, nil, nil
	}
	ex, err := expression.NewBuilder().WithFilter(*spec.filter).Build()
	if err != nil {
		return nil, nil, nil, internal(err, "building a query")
	}
	names = maps.Clone(names)
	maps.Copy(names, ex.Names())
	return names, ex.Filter(), ex.Values(), nil
}

// Filter tells which of a batch of candidates the viewer may see; lists call
// it page by page and read on until a page is full.
type Filter[T any] func(ctx context.Context, candidates []T) ([]bool, error)

func keepAs[T any](f Filter[T], conv func(item) (T, error)) Keep {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, cand []item) ([]bool, error) {
		ts := make([]T, len(cand))
		for i, it := range cand {
			v, err := conv(it)
			if err != nil {
				return nil, err
			}
			ts[i] = v
		}
		return f(ctx, ts)
	}
}

func convConn[T any](c *domain.Conn[item], conv func(item) (T, error)) (*domain.Conn[T], error) {
	items := make([]T, len(c.Items))
	for i, it := range c.Items {
		v, err := conv(it)
		if err != nil {
			return nil, err
		}
		items[i] = v
	}
	return domain.ConnOf(c, items), nil
}

// listAs is list decoding each item as a T, keep seeing decoded candidates.
func listAs[T any](ctx context.Context, s *Store, spec listSpec, page domain.Page, keep Filter[T]) (*domain.Conn[T], error) {
	conv := decodedOnce(decodeAs[T])
	spec.keep = keepAs(keep, conv)
	c, err := s.list(ctx, spec, page)
	if err != nil {
		return nil, err
	}
	return convConn(c, conv)
}

// decodedOnce makes conv remember what it made of each item, so that an
// item its list's keep has seen is not decoded again for the page. Items
// are told apart by their sort key's attribute value, a pointer the SDK
// allocates per item read.
func decodedOnce[T any](conv func(item) (T, error)) func(item) (T, error) {
	var mu sync.Mutex
	seen := map[types.AttributeValue]T{}
	return func(it item) (T, error) {
		k := it[attrSK]
		mu.Lock()
		v, ok := seen[k]
		mu.Unlock()
		if ok && k != nil {
			return v, nil
		}
		v, err := conv(it)
		if err == nil && k != nil {
			mu.Lock()
			seen[k] = v
			mu.Unlock()
		}
		return v, err
	}
}

// pattern is an access pattern: the partitions of the table or an index it
// reads (a key builder below gives their keys) and the range of sort keys
// read in each, all beginning with prefix. Lists (list) read it page by page
// in sort-key order, descending with desc, and check each cursor's sort key
// with cursor; queryAll reads a whole partition of it in ascending order.
type pattern struct {
	keySchema
	prefix string
	desc   bool
	cursor func(sk string) bool // nil: never paged
}

// of returns the list of the pattern over the given partitions (merged when
// there are several: their sort keys never collide).
func (p pattern) of(pks ...string) listSpec { return listSpec{pattern: p, pks: pks} }
