// Package engine is the embedded store's table engine: DynamoDB's data
// model and the calls taskgraph makes, on ordered in-memory indexes. Each
// table and each of its global secondary indexes is a B-tree
// (github.com/google/btree) of its items by key, so a point read or a
// write costs O(log n) and a Query or Scan O(log n + what it reads).
// Expressions (key conditions, conditions, filters, updates, projections)
// are parsed and evaluated by minidyn's interpreter, a library, on one
// item at a time.
//
// Server serves the engine as DynamoDB's HTTP JSON protocol, so the
// ordinary SDK client talks to it. Reads run side by side; writes run one
// at a time, each call (a transaction or a batch included) atomic.
package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/google/btree"
)

// Engine holds the tables.
type Engine struct {
	mu     sync.RWMutex // reads share it, writes hold it alone
	tables map[string]*table
	tokens map[string]token // TransactWriteItems' client request tokens
	// tokenOrder is the tokens oldest first, for their expiry.
	tokenOrder []string

	fail failures
	now  func() time.Time
}

// New returns an engine with no tables.
func New() *Engine {
	return &Engine{tables: map[string]*table{}, tokens: map[string]token{}, now: time.Now}
}

// keyAttr is a key attribute: its name and type (S or B).
type keyAttr struct {
	name, typ string
}

// schema is a table's or an index's key: its hash and, optionally, range
// attribute.
type schema struct {
	hash, rng keyAttr
}

// table is one table: its items in the primary B-tree, and one B-tree per
// global secondary index.
type table struct {
	name    string
	key     schema
	indexes []*index
	items   *btree.BTreeG[entry]
	bytes   int64
	created time.Time
	defs    []attrDef // AttributeDefinitions as created
	billing string
}

// index is a global secondary index: its projection (indexprojection.go)
// is ALL, KEYS_ONLY or INCLUDE nonKey; keep, nil for ALL, is the
// attributes its entries hold.
type index struct {
	name       string
	key        schema
	items      *btree.BTreeG[entry]
	projection string
	nonKey     []string
	keep       map[string]bool
}

// entry is one item in a B-tree: its key in that tree and, in an index,
// its table key, which orders items whose index keys are equal.
type entry struct {
	hash, rng   string
	thash, trng string
	it          *item
}

func less(a, b entry) bool {
	switch {
	case a.hash != b.hash:
		return a.hash < b.hash
	case a.rng != b.rng:
		return a.rng < b.rng
	case a.thash != b.thash:
		return a.thash < b.thash
	}
	return a.trng < b.trng
}

func newTree() *btree.BTreeG[entry] { return btree.NewG(32, less) }

// tableEntry is the entry of an item in its table's tree.
func tableEntry(it *item) entry { return entry{hash: it.key.hash, rng: it.key.rng, it: it} }

// indexEntry is the entry of an item in index i's tree.
func indexEntry(it *item, i int) entry {
	k := it.ix[i]
	return entry{hash: k.hash, rng: k.rng, thash: it.key.hash, trng: it.key.rng, it: it}
}

// table returns the named table, or ResourceNotFoundException.
func (e *Engine) table(name string) (*table, error) {
	if name == "" {
		return nil, validation("1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null")
	}
	t := e.tables[name]
	if t == nil {
		return nil, &Error{Code: "ResourceNotFoundException", Message: "Cannot do operations on a non-existent table"}
	}
	return t, nil
}

// index returns the table's named index, or ValidationException.
func (t *table) index(name string) (int, *index, error) {
	for i, ix := range t.indexes {
		if ix.name == name {
			return i, ix, nil
		}
	}
	return 0, nil, validation("The table does not have the specified index: %s", name)
}

// put stores it in place of old (nil: none) in the table and its indexes.
func (t *table) put(old, it *item) {
	if old != nil {
		t.remove(old)
	}
	t.items.ReplaceOrInsert(tableEntry(it))
	for i, ix := range t.indexes {
		if it.ix[i].ok {
			ix.items.ReplaceOrInsert(indexEntry(it, i))
		}
	}
	t.bytes += int64(it.size)
}

// remove takes it out of the table and its indexes.
func (t *table) remove(it *item) {
	t.items.Delete(tableEntry(it))
	for i, ix := range t.indexes {
		if it.ix[i].ok {
			ix.items.Delete(indexEntry(it, i))
		}
	}
	t.bytes -= int64(it.size)
}

// get returns the item with the key, or nil.
func (t *table) get(k ikey) *item {
	e, ok := t.items.Get(entry{hash: k.hash, rng: k.rng})
	if !ok {
		return nil
	}
	return e.it
}

// Error is an error as DynamoDB answers it: its code (the exception's
// name), message and, for a cancelled transaction, the reasons.
type Error struct {
	Code    string
	Message string
	Reasons []Reason
	status  int
}

// Reason is one item's reason in a cancelled transaction.
type Reason struct {
	Code    string
	Message string `json:",omitempty"`
	Item    []byte `json:"-"` // the item as it is (ReturnValuesOnConditionCheckFailure ALL_OLD)
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func validation(format string, args ...any) *Error {
	return &Error{Code: "ValidationException", Message: fmt.Sprintf(format, args...)}
}
