package engine

import (
	"bytes"
	"strconv"
	"sync/atomic"

	"github.com/google/btree"
	mt "github.com/truora/minidyn/types"
)

// visits counts the entries Queries and Scans visit (tests check that a
// Query visits what it returns).
var visits atomic.Int64

// pageBytes is the most a Query or Scan reads in one call: it stops after
// the item that reaches 1 MB (DynamoDB's rule).
const pageBytes = 1 << 20

// batchGetBytes is the most a BatchGetItem answers; the keys past it are
// left unprocessed (DynamoDB's 16 MB).
const batchGetBytes = 16 << 20

type getItemInput struct {
	TableName                string
	Key                      attrMap
	ProjectionExpression     string
	ExpressionAttributeNames map[string]string
}

func (e *Engine) getItem(in *getItemInput) ([]byte, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	t, err := e.table(in.TableName)
	if err != nil {
		return nil, err
	}
	x := exprs{names: in.ExpressionAttributeNames, proj: &projCache{}}
	if err := x.check(in.ProjectionExpression); err != nil {
		return nil, err
	}
	k, err := keyOf(t.key, in.Key, true)
	if err != nil {
		return nil, err
	}
	b := []byte(`{`)
	if it := t.get(k); it != nil {
		raw, err := x.projected(in.ProjectionExpression, it)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `"Item":`...), raw...)
	}
	return append(b, '}'), nil
}

// projected is an item's JSON as a projection expression leaves it.
func (x exprs) projected(p string, it *item) ([]byte, error) {
	if p == "" {
		return it.raw, nil
	}
	a, err := it.decode()
	if err != nil {
		return nil, err
	}
	if a, err = x.project(p, a); err != nil {
		return nil, err
	}
	return encodeItem(a), nil
}

type keysAndAttributes struct {
	Keys                     []attrMap
	ConsistentRead           bool   `json:",omitempty"`
	ProjectionExpression     string `json:",omitempty"`
	ExpressionAttributeNames map[string]string
}

type batchGetItemInput struct {
	RequestItems map[string]*keysAndAttributes
}

func (e *Engine) batchGetItem(in *batchGetItemInput) ([]byte, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if len(in.RequestItems) == 0 {
		return nil, validation("1 validation error detected: Value null at 'requestItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	n := 0
	for _, r := range in.RequestItems {
		n += len(r.Keys)
	}
	if n > 100 {
		return nil, validation("Too many items requested for the BatchGetItem call")
	}
	type read struct {
		t    *table
		r    *keysAndAttributes
		x    exprs
		keys []ikey
	}
	reads := make([]read, 0, len(in.RequestItems))
	for _, name := range sortedKeys(in.RequestItems) {
		r := in.RequestItems[name]
		t, err := e.table(name)
		if err != nil {
			return nil, err
		}
		if len(r.Keys) == 0 {
			return nil, validation("1 validation error detected: Value at 'requestItems.%s.member.keys' failed to satisfy constraint: Member must have length greater than or equal to 1", name)
		}
		x := exprs{names: r.ExpressionAttributeNames, proj: &projCache{}}
		if err := x.check(r.ProjectionExpression); err != nil {
			return nil, err
		}
		rd := read{t: t, r: r, x: x}
		seen := map[ikey]bool{}
		for _, key := range r.Keys {
			k, err := keyOf(t.key, key, true)
			if err != nil {
				return nil, err
			}
			if seen[k] {
				return nil, validation("Provided list of item keys contains duplicates")
			}
			seen[k] = true
			rd.keys = append(rd.keys, k)
		}
		reads = append(reads, rd)
	}
	var b bytes.Buffer
	b.WriteString(`{"Responses":{`)
	var unprocessed map[string][]attrs
	size := 0
	for i, rd := range reads {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(appendString(nil, rd.t.name))
		b.WriteString(`:[`)
		first := true
		for j, k := range rd.keys {
			if size >= batchGetBytes || e.fail.unprocessed(rd.t.name, j, rd.r.Keys[j]) {
				if unprocessed == nil {
					unprocessed = map[string][]attrs{}
				}
				unprocessed[rd.t.name] = append(unprocessed[rd.t.name], rd.r.Keys[j])
				continue
			}
			it := rd.t.get(k)
			if it == nil {
				continue
			}
			raw, err := rd.x.projected(rd.r.ProjectionExpression, it)
			if err != nil {
				return nil, err
			}
			size += it.size
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.Write(raw)
		}
		b.WriteByte(']')
	}
	b.WriteString(`},"UnprocessedKeys":{`)
	writeUnprocessed(&b, in, unprocessed)
	b.WriteString(`}}`)
	return b.Bytes(), nil
}

// writeUnprocessed writes a BatchGetItem's keys left unprocessed, by
// table, each table's with its request's options, as DynamoDB answers
// them: the request to send again.
func writeUnprocessed(b *bytes.Buffer, in *batchGetItemInput, unprocessed map[string][]attrs) {
	for i, name := range sortedKeys(unprocessed) {
		if i > 0 {
			b.WriteByte(',')
		}
		r := in.RequestItems[name]
		b.Write(appendString(nil, name))
		b.WriteString(`:{"Keys":[`)
		for j, k := range unprocessed[name] {
			if j > 0 {
				b.WriteByte(',')
			}
			b.Write(appendAttrs(nil, k))
		}
		b.WriteByte(']')
		if r.ConsistentRead {
			b.WriteString(`,"ConsistentRead":true`)
		}
		if r.ProjectionExpression != "" {
			b.WriteString(`,"ProjectionExpression":`)
			b.Write(appendString(nil, r.ProjectionExpression))
		}
		if len(r.ExpressionAttributeNames) > 0 {
			b.WriteString(`,"ExpressionAttributeNames":{`)
			for j, n := range sortedKeys(r.ExpressionAttributeNames) {
				if j > 0 {
					b.WriteByte(',')
				}
				b.Write(appendString(nil, n))
				b.WriteByte(':')
				b.Write(appendString(nil, r.ExpressionAttributeNames[n]))
			}
			b.WriteByte('}')
		}
		b.WriteByte('}')
	}
}

type queryInput struct {
	TableName                 string
	IndexName                 string
	KeyConditionExpression    string
	FilterExpression          string
	ProjectionExpression      string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues attrMap
	ExclusiveStartKey         attrMap
	Limit                     *int
	ScanIndexForward          *bool
	ConsistentRead            bool
	Select                    string
	TotalSegments             *int
}

// source is the tree a Query or Scan reads: the table's or an index's.
type source struct {
	t    *table
	tree *btree.BTreeG[entry]
	key  schema
	ix   int // the index's position, -1 for the table
}

// source returns the tree of the table or of its index name.
func (t *table) source(name string, consistent bool) (source, error) {
	if name == "" {
		return source{t: t, tree: t.items, key: t.key, ix: -1}, nil
	}
	i, ix, err := t.index(name)
	if err != nil {
		return source{}, err
	}
	if consistent {
		return source{}, validation("Consistent reads are not supported on global secondary indexes")
	}
	return source{t: t, tree: ix.items, key: ix.key, ix: i}, nil
}

// startKey reads an ExclusiveStartKey: the table's key, and in an index
// the index's key too.
func (s source) startKey(a attrs) (*entry, error) {
	if a == nil {
		return nil, nil
	}
	bad := func() error {
		return validation("The provided starting key is invalid: The provided key element does not match the schema")
	}
	names := map[string]bool{s.t.key.hash.name: true, s.t.key.rng.name: true, s.key.hash.name: true, s.key.rng.name: true}
	delete(names, "")
	if len(a) != len(names) {
		return nil, bad()
	}
	tk, err := keyOf(s.t.key, a, false)
	if err != nil {
		return nil, bad()
	}
	if s.ix < 0 {
		return &entry{hash: tk.hash, rng: tk.rng}, nil
	}
	ik, err := keyOf(s.key, a, false)
	if err != nil {
		return nil, bad()
	}
	return &entry{hash: ik.hash, rng: ik.rng, thash: tk.hash, trng: tk.rng}, nil
}

// lastKey is the LastEvaluatedKey of a page that stopped at en.
func (s source) lastKey(en entry) attrs {
	a := attrs{}
	put := func(k keyAttr, v string) {
		if k.name == "" {
			return
		}
		if k.typ == "B" {
			a[k.name] = &mt.Item{B: []byte(v)}
			return
		}
		a[k.name] = &mt.Item{S: &v}
	}
	put(s.t.key.hash, en.it.key.hash)
	put(s.t.key.rng, en.it.key.rng)
	if s.ix >= 0 {
		put(s.key.hash, en.hash)
		put(s.key.rng, en.rng)
	}
	return a
}

// page collects what a Query or Scan returns.
type page struct {
	x          exprs
	filter     condition
	projection string
	limit      int
	count      bool // Select COUNT
	items      [][]byte
	scanned    int
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
	raw := en.it.raw
	if p.filter != nil || p.projection != "" {
		a, err := en.it.decode()
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
		p.size += en.it.size
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

func (e *Engine) newPage(x exprs, filter, projection, sel string, limit *int) (*page, error) {
	p := &page{x: x, projection: projection, limit: -1}
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

// answer is the page as DynamoDB's JSON.
func (p *page) answer(s source) ([]byte, error) {
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
	return append(b, '}'), nil
}

func (e *Engine) query(in *queryInput) ([]byte, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	t, err := e.table(in.TableName)
	if err != nil {
		return nil, err
	}
	s, err := t.source(in.IndexName, in.ConsistentRead)
	if err != nil {
		return nil, err
	}
	x := exprs{names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues, proj: &projCache{}}
	if err := x.check(in.KeyConditionExpression, in.FilterExpression, in.ProjectionExpression); err != nil {
		return nil, err
	}
	kc, err := x.parseKeyCondition(in.KeyConditionExpression, s.key)
	if err != nil {
		return nil, err
	}
	p, err := e.newPage(x, in.FilterExpression, in.ProjectionExpression, in.Select, in.Limit)
	if err != nil {
		return nil, err
	}
	if s.ix < 0 {
		p.end = kc.end(in.ScanIndexForward == nil || *in.ScanIndexForward)
	}
	esk, err := s.startKey(in.ExclusiveStartKey)
	if err != nil {
		return nil, err
	}
	if esk != nil && (esk.hash != kc.hash || kc.cmp(esk.rng) != 0) {
		return nil, validation("The provided starting key is outside query boundaries based on provided conditions")
	}
	if in.ScanIndexForward == nil || *in.ScanIndexForward {
		pivot := entry{hash: kc.hash, rng: kc.low()}
		if esk != nil {
			pivot = *esk
		}
		s.tree.AscendGreaterOrEqual(pivot, func(en entry) bool {
			visits.Add(1)
			switch {
			case en.hash != kc.hash:
				return false
			case esk != nil && !less(*esk, en):
				return true
			}
			switch kc.cmp(en.rng) {
			case -1:
				return true
			case 1:
				return false
			}
			return p.take(en)
		})
	} else {
		pivot := entry{hash: kc.hash + "\x00"}
		if hi, ok := kc.high(); ok {
			pivot = entry{hash: kc.hash, rng: hi}
		}
		if esk != nil {
			pivot = *esk
		}
		s.tree.DescendLessOrEqual(pivot, func(en entry) bool {
			visits.Add(1)
			switch {
			case en.hash > kc.hash:
				return true
			case en.hash < kc.hash:
				return false
			case esk != nil && !less(en, *esk):
				return true
			}
			switch kc.cmp(en.rng) {
			case 1:
				return true
			case -1:
				return false
			}
			return p.take(en)
		})
	}
	return p.answer(s)
}

func (e *Engine) scan(in *queryInput) ([]byte, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	t, err := e.table(in.TableName)
	if err != nil {
		return nil, err
	}
	if in.TotalSegments != nil && *in.TotalSegments > 1 {
		return nil, validation("the embedded store scans in one segment")
	}
	s, err := t.source(in.IndexName, in.ConsistentRead)
	if err != nil {
		return nil, err
	}
	x := exprs{names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues, proj: &projCache{}}
	if err := x.check(in.FilterExpression, in.ProjectionExpression); err != nil {
		return nil, err
	}
	p, err := e.newPage(x, in.FilterExpression, in.ProjectionExpression, in.Select, in.Limit)
	if err != nil {
		return nil, err
	}
	esk, err := s.startKey(in.ExclusiveStartKey)
	if err != nil {
		return nil, err
	}
	visit := func(en entry) bool {
		visits.Add(1)
		if esk != nil && !less(*esk, en) {
			return true
		}
		return p.take(en)
	}
	if esk != nil {
		s.tree.AscendGreaterOrEqual(*esk, visit)
	} else {
		s.tree.Ascend(visit)
	}
	return p.answer(s)
}
