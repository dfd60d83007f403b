package engine

import (
	"strconv"
	"sync/atomic"
)

// A page of a Query or a Scan: the items it reads, filtered and projected,
// up to its Limit or 1 MB, and its LastEvaluatedKey.

// visits counts the entries Queries and Scans visit (tests check that a
// Query visits what it returns).
var visits atomic.Int64

// pageBytes is the most a Query or Scan reads in one call: it stops after
// the item that reaches 1 MB (DynamoDB's rule).
const pageBytes = 1 << 20

// page collects what a Query or Scan returns.
type page struct {
	x          exprs
	filter     condition
	projection string
	keep       map[string]bool // an index's projection (nil: whole items)
	limit      int
	count      bool // Select COUNT
	items      [][]byte
	scanned    int
	read       int // the size of the items read, filtered out or not (what it consumes)
	size       int
	end        *string // see take
	full       *entry  // the item that reached 1 MB
	last       *entry  // the LastEvaluatedKey's item
	err        error
}

// take reads one item into the page and tells whether to go on. A page
// that reached its Limit stops with its LastEvaluatedKey, but for the item
// at the key condition's inclusive end (end), which ends it without one
// (a Query of a table's items by <=, >= or BETWEEN; its indexes, and
// Scans, always have one). A page that reached 1 MB stops at the next
// item it would read, so that its LastEvaluatedKey says there is more.
// Both are DynamoDB Local's answers.
func (p *page) take(en entry) bool {
	if p.full != nil {
		p.last = p.full
		return false
	}
	p.scanned++
	raw, size, err := entryOf(en.it, p.keep)
	if err != nil {
		p.err = err
		return false
	}
	p.read += size
	if p.filter != nil || p.projection != "" {
		a, err := decodeAttrs(raw)
		ok := err == nil
		if ok {
			ok, err = p.x.match(p.filter, a)
		}
		if err == nil && ok && p.projection != "" && !p.count {
			if a, err = p.x.project(p.projection, a); err == nil {
				raw = encodeItem(a)
			}
		}
		if err != nil {
			p.err = err
			return false
		}
		if !ok {
			raw = nil
		}
	}
	if raw != nil {
		// The 1 MB counts the items the filter keeps, as DynamoDB Local
		// counts (DynamoDB counts every item read).
		p.size += size
		if p.count {
			raw = []byte{}
		}
		p.items = append(p.items, raw)
	}
	switch {
	case p.scanned == p.limit:
		if p.end == nil || en.rng != *p.end {
			p.last = &en
		}
		return false
	case p.size >= pageBytes:
		p.full = &en
	}
	return true
}

func (e *Engine) newPage(x exprs, s source, indexName, filter, projection, sel string, limit *int) (*page, error) {
	p := &page{x: x, projection: projection, limit: -1, keep: s.keep}
	if err := checkFilterProjected(s, indexName, filter, x.names); err != nil {
		return nil, err
	}
	var err error
	if p.filter, err = parseCondition("FilterExpression", filter); err != nil {
		return nil, err
	}
	if limit != nil {
		if *limit < 1 {
			return nil, validation("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1", *limit)
		}
		p.limit = *limit
	}
	if sel == "ALL_ATTRIBUTES" && s.keep != nil {
		return nil, validation("One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index %s because its projection type is not ALL", indexName)
	}
	switch sel {
	case "", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES":
	case "COUNT":
		p.count = true
	case "SPECIFIC_ATTRIBUTES":
		if projection == "" {
			return nil, validation("Select SPECIFIC_ATTRIBUTES needs a ProjectionExpression")
		}
	default:
		return nil, validation("Invalid Select: %s", sel)
	}
	if sel != "" && sel != "SPECIFIC_ATTRIBUTES" && projection != "" {
		return nil, validation("Cannot specify the ProjectionExpression with Select %s", sel)
	}
	return p, nil
}

// answer is the page as DynamoDB's JSON, with its consumed capacity
// when in asks for it.
func (p *page) answer(s source, in *queryInput) ([]byte, error) {
	if p.err != nil {
		return nil, p.err
	}
	size := 64
	for _, it := range p.items {
		size += len(it) + 1
	}
	b := make([]byte, 0, size)
	if !p.count {
		b = append(b, `{"Items":[`...)
		for i, it := range p.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, it...)
		}
		b = append(b, "],"...)
	} else {
		b = append(b, '{')
	}
	b = append(b, `"Count":`...)
	b = strconv.AppendInt(b, int64(len(p.items)), 10)
	b = append(b, `,"ScannedCount":`...)
	b = strconv.AppendInt(b, int64(p.scanned), 10)
	if p.last != nil {
		b = append(b, `,"LastEvaluatedKey":`...)
		b = appendAttrs(b, s.lastKey(*p.last))
	}
	b = append(b, '}')
	if wantsCapacity(in.ReturnConsumedCapacity) {
		b = withCapacity(b, capacity{in.TableName: blocks(p.read, 4096) * readFactor(in.ConsistentRead)}, true)
	}
	return b, nil
}
