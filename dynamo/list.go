package dynamo

import (
	"context"
	"encoding/base64"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

// MaxFirst is the largest page a list returns, read forwards (first) or
// backwards (last).
const MaxFirst = 100

const cursorVersion = "c1:"

// A cursor is the sort key of an item of a page. The partition is never in
// it: the connection supplies its own, so a cursor cannot lead a read into
// another partition. Each list checks the sort key's shape before using it.
func encodeCursor(sk string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + sk))
}

func decodeCursor(c string, valid func(string) bool) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	sk, ok := strings.CutPrefix(string(b), cursorVersion)
	// Only the canonical encoding is a cursor: the decoder would also take
	// line breaks and stray trailing bits.
	if err != nil || !ok || !valid(sk) || encodeCursor(sk) != c {
		return "", domain.Errorf(domain.EINVALID, "%q is not a cursor of this list", domain.Clip(c))
	}
	return sk, nil
}

// cursorArg decodes the optional cursor argument arg ("after", "before"):
// "" when it is absent.
func cursorArg(arg string, c *string, valid func(string) bool) (string, error) {
	if c == nil {
		return "", nil
	}
	sk, err := decodeCursor(*c, valid)
	if err != nil {
		return "", domain.Errorf(domain.EINVALID, "%s: %s", arg, domain.ErrorMessage(err))
	}
	return sk, nil
}

// pageSize returns the page's size and whether it is read backwards (Last).
func pageSize(p domain.Page) (n int, back bool, err error) {
	name, n := "first", p.First
	if p.Last != nil {
		if p.First != 0 {
			return 0, false, domain.Errorf(domain.EINVALID, "first and last cannot be given together: first reads a page forwards, last backwards")
		}
		name, n, back = "last", *p.Last, true
	}
	if n < 1 || n > MaxFirst {
		return 0, false, domain.Errorf(domain.EINVALID, "%s must be between 1 and %d, not %d", name, MaxFirst, n)
	}
	return n, back, nil
}

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
	lo, hi := spec.prefix, spec.prefix+rangeEnd
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
	// desc: the partitions are read in descending sort-key order.
	desc := spec.desc != back
	// The cursor the read starts from: its own item, read and dropped, takes
	// one place of the first read's Limit.
	start := after
	if back {
		start = before
	}
	want := size + 1
	out := &domain.Conn[item]{}
	if lo > hi || len(spec.pks) == 0 {
		return out, nil
	}
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
	drop := func(sk string) bool { return sk == after || sk == before || sk == spec.before }
	var kept []item
	for {
		// Refill every source whose buffer ran dry, all at once.
		var need []*source
		for _, src := range srcs {
			if len(src.buf) == 0 && !src.exhausted {
				need = append(need, src)
			}
		}
		err := s.parallel(ctx, len(need), func(ctx context.Context, i int) error {
			src := need[i]
			limit := want << min(src.fetches, 4)
			if src.fetches == 0 && start != "" {
				limit++
			}
			src.in.Limit = aws.Int32(int32(min(limit, 1000)))
			res, err := s.db.Query(ctx, src.in)
			if err != nil {
				return wrap(err, "reading a list")
			}
			src.fetches++
			for _, it := range res.Items {
				if !drop(str(it, spec.skAttr)) {
					src.buf = append(src.buf, it)
				}
			}
			src.in.ExclusiveStartKey = res.LastEvaluatedKey
			src.exhausted = len(res.LastEvaluatedKey) == 0
			return nil
		})
		if err != nil {
			return nil, err
		}
		// Merge: take the smallest (largest) head while every source that may
		// still hold items has one buffered.
		var cand []item
		for len(kept)+len(cand) < want {
			var best *source
			ready := true
			for _, src := range srcs {
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
				a, b := str(src.buf[0], spec.skAttr), str(best.buf[0], spec.skAttr)
				if (a < b) != desc {
					best = src
				}
			}
			if !ready || best == nil {
				break
			}
			cand = append(cand, best.buf[0])
			best.buf = best.buf[1:]
		}
		if spec.keep != nil && len(cand) > 0 {
			ok, err := spec.keep(ctx, cand)
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
		done := true
		for _, src := range srcs {
			if len(src.buf) > 0 || !src.exhausted {
				done = false
			}
		}
		if len(kept) >= want || done {
			break
		}
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
		out.Cursors[i] = encodeCursor(str(it, spec.skAttr))
	}
	return out, nil
}

// queryAll reads every item of one partition of a pattern (its sort keys
// beginning with the pattern's prefix), in ascending sort-key order.
func (s *Store) queryAll(ctx context.Context, p pattern, pk string) ([]item, error) {
	return s.queryAllBefore(ctx, p, pk, "", "reading a list")
}

// queryAllBefore is queryAll, and with before set reads only the items
// whose sort keys sort before it (a pattern with no prefix: a key
// condition has one sort-key term). what names the read in its error.
func (s *Store) queryAllBefore(ctx context.Context, p pattern, pk, before, what string) ([]item, error) {
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}}
	cond, names := keyEqual, p.pkName()
	switch {
	case before != "" && p.prefix != "":
		return nil, internal(errors.New("a key condition holds one sort-key term: a prefix or a bound"), what)
	case before != "":
		cond, names = keyBefore, p.names()
		values[":hi"] = &types.AttributeValueMemberS{Value: before}
	case p.prefix != "":
		cond, names = keyBeginsWith, p.names()
		values[":prefix"] = &types.AttributeValueMemberS{Value: p.prefix}
	}
	in := &dynamodb.QueryInput{TableName: &s.table, KeyConditionExpression: aws.String(cond),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values}
	if p.index != "" {
		in.IndexName = aws.String(p.index)
	} else {
		in.ConsistentRead = aws.Bool(strong(ctx))
	}
	var all []item
	q := dynamodb.NewQueryPaginator(s.db, in)
	for q.HasMorePages() {
		res, err := q.NextPage(ctx)
		if err != nil {
			return nil, wrap(err, what)
		}
		all = append(all, res.Items...)
	}
	return all, nil
}

// Key conditions: the same four texts for every pattern, written once
// rather than through the expression builder on every call. The partition
// and sort key attributes are the names #pk and #sk (keySchema.names), the
// values :pk and :lo/:hi or :prefix.
const (
	keyBetween    = "#pk = :pk AND #sk BETWEEN :lo AND :hi"
	keyBeginsWith = "#pk = :pk AND begins_with(#sk, :prefix)"
	keyBefore     = "#pk = :pk AND #sk < :hi"
	keyEqual      = "#pk = :pk"
)

// The key conditions' attribute names of each key schema, with and
// without the sort key (a Query must use every name it sends): one map
// each, shared by every Query (the SDK only reads them).
var keyNames, pkNames = map[keySchema]map[string]string{}, map[keySchema]map[string]string{}

func init() {
	for _, k := range []keySchema{onTable, onGSI1, onGSI2} {
		keyNames[k] = map[string]string{"#pk": k.pkAttr, "#sk": k.skAttr}
		pkNames[k] = map[string]string{"#pk": k.pkAttr}
	}
}

// names returns the names #pk and #sk of the key schema.
func (k keySchema) names() map[string]string {
	if n, ok := keyNames[k]; ok {
		return n
	}
	return map[string]string{"#pk": k.pkAttr, "#sk": k.skAttr}
}

// pkName returns the name #pk of the key schema.
func (k keySchema) pkName() map[string]string {
	if n, ok := pkNames[k]; ok {
		return n
	}
	return map[string]string{"#pk": k.pkAttr}
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

// queryAllAs is queryAll decoding each item as a T.
func queryAllAs[T any](ctx context.Context, s *Store, p pattern, pk string) ([]T, error) {
	items, err := s.queryAll(ctx, p, pk)
	if err != nil {
		return nil, err
	}
	return decodeAll[T](items)
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
