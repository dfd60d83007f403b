package engine

import (
	"fmt"
	"slices"

	"github.com/google/btree"
)

// The bulk calls of the data directory: a start loads a snapshot's items
// and replays the journal straight into the engine (no HTTP, no request
// decoding, no expressions), and a snapshot reads a table from a
// copy-on-write clone of its B-tree, taken in O(1) while writes are held
// and read while they go on.

// Engine returns the server's engine.
func (s *Server) Engine() *Engine { return s.e }

// LoadError is the error of Load for an item it cannot store: which one
// (from 0, in the order given) and why.
type LoadError struct {
	N   int
	Err error
}

func (e *LoadError) Error() string { return fmt.Sprintf("item %d: %v", e.N, e.Err) }

func (e *LoadError) Unwrap() error { return e.Err }

// Load stores items, each an item in DynamoDB's JSON (its attributes'
// object), in the table, each over any item with its key, as PutItem
// would with no condition. The items are checked as PutItem checks them;
// one that is not valid is a *LoadError and nothing is stored. The
// entries of the table's tree and of each index's are sorted first and
// inserted in order. Writes wait meanwhile.
func (e *Engine) Load(tableName string, items [][]byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, err := e.table(tableName)
	if err != nil {
		return err
	}
	its := make([]*item, len(items))
	for i, raw := range items {
		a, err := decodeAttrs(raw)
		if err == nil {
			its[i], err = t.newItem(a)
		}
		if err != nil {
			return &LoadError{N: i, Err: err}
		}
	}
	// The last of several items with one key wins, as with PutItems one
	// after another.
	slices.SortStableFunc(its, func(a, b *item) int { return compareEntries(tableEntry(a), tableEntry(b)) })
	kept := its[:0]
	for i, it := range its {
		if i+1 < len(its) && its[i+1].key == it.key {
			continue
		}
		kept = append(kept, it)
	}
	its = kept
	if t.items.Len() > 0 { // what the table holds already is replaced
		for _, it := range its {
			if old := t.get(it.key); old != nil {
				t.remove(old)
			}
		}
	}
	for _, it := range its {
		t.items.ReplaceOrInsert(tableEntry(it))
		t.bytes += int64(it.size)
	}
	for i, ix := range t.indexes {
		entries := make([]entry, 0, len(its))
		for _, it := range its {
			if it.ix[i].ok {
				entries = append(entries, indexEntry(it, i))
			}
		}
		slices.SortFunc(entries, compareEntries)
		for _, en := range entries {
			ix.items.ReplaceOrInsert(en)
		}
	}
	return nil
}

func compareEntries(a, b entry) int {
	switch {
	case less(a, b):
		return -1
	case less(b, a):
		return 1
	}
	return 0
}

// Set sets one item of the table to an image: item, in DynamoDB's JSON,
// or, when item is nil, no item with key (the key's attributes in
// DynamoDB's JSON). It is a journal record's replay: as PutItem or
// DeleteItem with no condition, without their requests.
func (e *Engine) Set(tableName string, key, item []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, err := e.table(tableName)
	if err != nil {
		return err
	}
	if item != nil {
		a, err := decodeAttrs(item)
		if err != nil {
			return err
		}
		it, err := t.newItem(a)
		if err != nil {
			return err
		}
		t.put(t.get(it.key), it)
		return nil
	}
	a, err := decodeAttrs(key)
	if err != nil {
		return err
	}
	k, err := keyOf(t.key, a, true)
	if err != nil {
		return err
	}
	if old := t.get(k); old != nil {
		t.remove(old)
	}
	return nil
}

// View is a table as it was at one point in time: a copy-on-write clone of
// its tree, which later writes to the table do not change. It may be read
// while the table is written, by one goroutine at a time.
type View struct {
	items *btree.BTreeG[entry]
}

// View returns the table as it is now. It costs O(1): the table's tree is
// cloned, and the nodes the two share are copied by the first write to
// each after.
func (e *Engine) View(tableName string) (*View, error) {
	e.mu.Lock() // a clone changes the original's copy-on-write context
	defer e.mu.Unlock()
	t, err := e.table(tableName)
	if err != nil {
		return nil, err
	}
	return &View{items: t.items.Clone()}, nil
}

// Len is the number of items in the view.
func (v *View) Len() int { return v.items.Len() }

// Items calls yield with each item of the view in key order, as DynamoDB's
// JSON (the attributes' object; not to be changed), until it returns
// false.
func (v *View) Items(yield func(raw []byte) bool) {
	v.items.Ascend(func(en entry) bool { return yield(en.it.raw) })
}

// ItemCount is the number of items in the table.
func (e *Engine) ItemCount(tableName string) (int, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	t, err := e.table(tableName)
	if err != nil {
		return 0, err
	}
	return t.items.Len(), nil
}
