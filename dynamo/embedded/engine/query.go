package engine

import (
	"github.com/google/btree"
	mt "github.com/truora/minidyn/types"
)

// Query: one partition of a table or an index, between the key
// condition's bounds, in either direction; the tree a Query or a Scan
// reads and its start and last keys.

// queryInput is what a Query or a Scan is sent.
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
	ReturnConsumedCapacity    string
}

// source is the tree a Query or Scan reads: the table's or an index's.
type source struct {
	t    *table
	tree *btree.BTreeG[entry]
	key  schema
	ix   int             // the index's position, -1 for the table
	keep map[string]bool // what the index's entries hold (nil: whole items)
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
	return source{t: t, tree: ix.items, key: ix.key, ix: i, keep: ix.keep}, nil
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
	p, err := e.newPage(x, s, in.IndexName, in.FilterExpression, in.ProjectionExpression, in.Select, in.Limit)
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
	return p.answer(s, in)
}
