package engine

import "bytes"

// BatchGetItem: up to 100 keys of one or more tables, each table's items
// in the order of its keys, the keys past 16 MB left unprocessed.

// batchGetBytes is the most a BatchGetItem answers; the keys past it are
// left unprocessed (DynamoDB's 16 MB).
const batchGetBytes = 16 << 20

type keysAndAttributes struct {
	Keys                     []attrMap
	ConsistentRead           bool   `json:",omitempty"`
	ProjectionExpression     string `json:",omitempty"`
	ExpressionAttributeNames map[string]string
}

type batchGetItemInput struct {
	RequestItems           map[string]*keysAndAttributes
	ReturnConsumedCapacity string
}

func (e *Engine) batchGetItem(in *batchGetItemInput) ([]byte, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	reads, err := e.batchReads(in)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"Responses":{`)
	used := capacity{}
	unprocessed, err := e.writeResponses(&b, reads, used)
	if err != nil {
		return nil, err
	}
	b.WriteString(`},"UnprocessedKeys":{`)
	writeUnprocessedKeys(&b, in, unprocessed)
	b.WriteString(`}}`)
	if wantsCapacity(in.ReturnConsumedCapacity) {
		return withCapacity(b.Bytes(), used, false), nil
	}
	return b.Bytes(), nil
}

// batchRead is one table's keys in a BatchGetItem, checked.
type batchRead struct {
	t    *table
	r    *keysAndAttributes
	x    exprs
	keys []ikey
}

// batchReads checks a BatchGetItem's request, table by table in name
// order: at most 100 keys in all, every table's keys and projection valid,
// no key twice.
func (e *Engine) batchReads(in *batchGetItemInput) ([]batchRead, error) {
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
	reads := make([]batchRead, 0, len(in.RequestItems))
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
		rd := batchRead{t: t, r: r, x: x}
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
	return reads, nil
}

// writeResponses writes each table's items found, in the order of its
// keys, and returns the keys left unprocessed (past 16 MB, or emulated),
// adding what each key read consumed to used.
func (e *Engine) writeResponses(b *bytes.Buffer, reads []batchRead, used capacity) (map[string][]attrs, error) {
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
			used[rd.t.name] += blocks(sizeOf(it), 4096) * readFactor(rd.r.ConsistentRead)
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
	return unprocessed, nil
}

// writeUnprocessedKeys writes the keys left unprocessed, by table, each
// with its table's request's other parameters, as the call's retry sends
// them.
func writeUnprocessedKeys(b *bytes.Buffer, in *batchGetItemInput, unprocessed map[string][]attrs) {
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
