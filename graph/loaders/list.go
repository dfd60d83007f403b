package loaders

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

// A List is one access pattern's loader: one row of the table in lists.go,
// which says all of it. Its name is the access pattern's (of its batches in
// traces and metrics); key is the key of the page a field's arguments ask
// for; fetch reads one key (a batch's keys at once, each) or batch a whole
// batch; under is the field it serves below an object looked up by id, read
// ahead with that object (prefetch.go) unless notAhead says why not; Load
// is the typed load its resolver calls. A loader is made on its first use
// in an operation: one for the operation, shared by a live event's views
// (ForViewer), or, for a list filtered by the viewer's memberships (own),
// one per viewer.
type List[K comparable, V any] struct {
	name string
	// under is the list field ("Type.field") the loader serves below an
	// object a lookup by id returns ("": none); notAhead, when set, says
	// why it is not read ahead with that object.
	under, notAhead string
	// own: the list is filtered by the viewer's memberships, so each view
	// of the loaders has its own loader; else the operation's is shared.
	own bool
	// key is the key of the page of the list of id that a asks for. s is
	// the field's selection (nil: none known); key may note there what the
	// fetch is to read beside the page (a key is made for the resolver's
	// load and for a read ahead alike).
	key func(l *Loaders, id string, a Args, s *selection) K
	// fetch reads one key (the keys of a batch all at once: each); batch,
	// when set instead, reads a whole batch.
	fetch func(l *Loaders, ctx context.Context, k K) (V, error)
	batch func(l *Loaders, ctx context.Context, ks []K) []result[V]
	// ahead, when set, reads the list ahead (it calls load) and returns
	// what the lookup waits for (nil: nothing); unset, a read ahead loads
	// the key and the lookup does not wait for it.
	ahead func(ctx context.Context, l *Loaders, s *selection, k K, load func() func() (V, error)) func()
	// slot is the row's place in the table (register), and of its loader
	// in Loaders.lists.
	slot int
}

// row is a List of any type, as the table holds it.
type row interface {
	// field is the List's under and notAhead.
	field() (under, notAhead string)
	// readAhead starts the read of the list field f under the object id
	// and returns what waits for it (nil: nothing to wait for).
	readAhead(ctx context.Context, l *Loaders, oc *graphql.OperationContext, id string, f graphql.CollectedField) func()
	// loaderOf is l's loader of the list, about its name and whether it
	// is own (tests).
	loaderOf(l *Loaders) any
	about() (name string, own bool)
}

// rows are the lists' Lists, in the order of their declaration (register).
var rows []row

// register adds r to the table: its place is its loader's slot.
func register[K comparable, V any](r *List[K, V]) *List[K, V] {
	r.slot = len(rows)
	rows = append(rows, r)
	return r
}

// slot holds one list's loader of a Loaders, made on its first use (most
// operations use one or two of them).
type slot struct {
	once sync.Once
	l    any // *loader[K, V] of the List in the slot's row
}

// Load is the typed load a resolver calls: the page of the list of id that
// a asks for, through l's loader of it.
func (r *List[K, V]) Load(ctx context.Context, l *Loaders, id string, a Args) (V, error) {
	return r.loader(l).Load(ctx, r.key(l, id, a, l.selection(ctx)))()
}

// loader returns l's loader of the list: the operation's (l.origin's) or,
// for an own list, l's.
func (r *List[K, V]) loader(l *Loaders) *loader[K, V] {
	if !r.own {
		l = l.origin
	}
	s := &l.lists[r.slot]
	s.once.Do(func() {
		if r.batch != nil {
			s.l = newLoader(l.cfg, l.levels, r.name, func(ctx context.Context, ks []K) []result[V] { return r.batch(l, ctx, ks) })
			return
		}
		s.l = each(l, r.name, func(ctx context.Context, k K) (V, error) { return r.fetch(l, ctx, k) })
	})
	return s.l.(*loader[K, V])
}

func (r *List[K, V]) field() (string, string) { return r.under, r.notAhead }

func (r *List[K, V]) loaderOf(l *Loaders) any { return r.loader(l) }

func (r *List[K, V]) about() (string, bool) { return r.name, r.own }

func (r *List[K, V]) readAhead(ctx context.Context, l *Loaders, oc *graphql.OperationContext, id string, f graphql.CollectedField) func() {
	a := argsOf(oc, f)
	if a.badAsOf {
		return nil // (the resolver reports it)
	}
	s := &selection{oc: oc, f: f, nodesOf: func() []graphql.CollectedField { return nodeFields(oc, f) }}
	k := r.key(l, id, a, s)
	load := func() func() (V, error) { return r.loader(l).Load(ctx, k) }
	if r.ahead == nil {
		load()
		return nil
	}
	return r.ahead(ctx, l, s, k, load)
}

// waited is the ahead of a list the lookup waits for (a user's lists: the
// profile is read in their visibility check's batch, Me).
func waited[K comparable, V any](_ context.Context, _ *Loaders, _ *selection, _ K, load func() func() (V, error)) func() {
	return waitFor(load())
}

// selection is a list field's selection, as its key reads it: the field,
// and the fields its nodes select.
type selection struct {
	oc      *graphql.OperationContext
	f       graphql.CollectedField
	nodesOf func() []graphql.CollectedField
	nodes   []graphql.CollectedField
	read    bool
}

// Nodes returns the fields the connection selects on its nodes: for the
// resolver, as the document has them, deferred ones too (connNodeFields);
// for a read ahead, those its plan resolves with the field (nodeFields).
func (s *selection) Nodes() []graphql.CollectedField {
	if !s.read {
		s.nodes, s.read = s.nodesOf(), true
	}
	return s.nodes
}

// selection is the current field's selection, nil without one.
func (l *Loaders) selection(ctx context.Context) *selection {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return nil
	}
	return &selection{oc: graphql.GetOperationContext(ctx), f: graphql.GetFieldContext(ctx).Field,
		nodesOf: func() []graphql.CollectedField { return l.connNodeFields(ctx) }}
}
