// Package stepmode is the tests' step mode of the GraphQL handler's
// loaders (graph.LoaderConfig.Steps): only tests and the benchmarks import
// it, and the handler reaches it through that one hook (graph.StepMode).
package stepmode

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Step mode (graph.LoaderConfig.Steps): for tests that pin DynamoDB calls and
// round trips. With a batch window, a level of a query is one batch only if
// its resolvers all ask within the window, which a busy machine does not
// guarantee; in step mode an operation's loaders are flushed (Flush) when
// every piece of its work that is running waits on a loader, so that a
// level is one batch per loader whatever the machine's load.
//
// The work is counted, per operation (opSteps.active), as it starts and
// stops:
//
//   - a field: from its field middleware's start to its end (stepFields);
//     and, from the end of a field whose value has fields selected, each
//     field gqlgen will go on to resolve, from that moment on: gqlgen
//     resolves a value's plain fields one after another, each with all it
//     selects, then its resolver fields all at once, so a field that is
//     about to start is counted before its parent's count ends (scope);
//     a value's deferred resolver fields (@defer) are its last step: gqlgen
//     starts them on a goroutine of their own once the others are done,
//     and they count from that moment, so the reads of every deferred
//     fragment of a level batch together (an object that resolves to null
//     before its deferred fields start would leave them counted: step
//     mode is for tests whose operations succeed);
//   - a read: from the flush that starts a batch to its end, and the
//     goroutines that reads start for one key each or one DynamoDB call
//     each (fork; dynamo.WithFork);
//   - a wait: a caller waiting on a loader's result stops counting, and
//     counts again from the moment the batch hands the result out, before
//     it wakes.
//
// When the count drops to zero the operation flushes every loader that
// has keys, or, with none, tells the trigger (Trigger.SetIdle: a test's
// gate may then answer the DynamoDB calls it holds; Park).

// Trigger puts the loaders of a handler into step mode, as its
// graph.LoaderConfig.Steps: each operation's batches are read when every
// running resolver of the operation waits on a loader, not after a time.
// The zero value is ready to use.
type Trigger struct {
	mu   sync.Mutex
	idle func() int
}

// SetIdle sets the function called (on a goroutine of its own) when an
// operation's work all waits and no loader has keys: every DynamoDB call
// the operation still needs is then under way (bench.Gate.Release answers
// the calls it holds). Nil unsets it.
func (t *Trigger) SetIdle(f func() int) {
	t.mu.Lock()
	t.idle = f
	t.mu.Unlock()
}

func (t *Trigger) idleFunc() func() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.idle
}

// opSteps is one operation's step mode: its count of running work, its
// loaders and the fields gqlgen is about to resolve.
type opSteps struct {
	trigger *Trigger
	mu      sync.Mutex
	active  int // work running, or about to start
	loaders []interface{ flushPending() bool }
	scopes  map[scopeKey]*scope
	started bool // the root scope is made
	// markers are the contexts of the parts of a query with @defer
	// resolved apart (Part), each its parts' scope.
	markers map[*graphql.FieldContext]bool
}

// Operation starts one operation's step mode (graph.StepMode).
func (t *Trigger) Operation() graph.OperationSteps {
	return &opSteps{trigger: t, scopes: map[scopeKey]*scope{}, markers: map[*graphql.FieldContext]bool{}}
}

// idle counts n pieces of work as stopped (s.mu held) and, when none runs,
// flushes the loaders that have keys.
func (s *opSteps) idle(n int) {
	s.active -= n
	if s.active < 0 {
		panic("graph: step mode counted more work stopped than started")
	}
	if s.active > 0 {
		return
	}
	for _, l := range s.loaders {
		if l.flushPending() {
			s.active++ // the batch's read, until its batch function ends
		}
	}
	if s.active == 0 {
		if f := s.trigger.idleFunc(); f != nil {
			go f()
		}
	}
}

// fork counts n goroutines about to start while the caller waits for them
// (dynamo.WithFork): each calls the returned function when it ends, and
// the last one's end hands its count back to the caller.
func (s *opSteps) fork(n int) func() {
	if n <= 0 {
		return func() {}
	}
	s.mu.Lock()
	s.active += n - 1
	s.mu.Unlock()
	var left atomic.Int64
	left.Store(int64(n))
	return func() {
		if left.Add(-1) == 0 {
			return
		}
		s.mu.Lock()
		s.idle(1)
		s.mu.Unlock()
	}
}

// forked gives ctx's parallel DynamoDB reads (dynamo.WithFork) to s.
func (s *opSteps) forked(ctx context.Context) context.Context {
	return dynamo.WithFork(ctx, s.fork)
}

// stepsOf returns the step mode of ctx's operation, or nil.
func stepsOf(ctx context.Context) *opSteps {
	s, _ := graph.StepsOf(ctx).(*opSteps)
	return s
}

// Park counts the work that ctx belongs to, in an operation in step mode,
// as waiting from Park until the returned function is called (each at most
// once, in either order): for a test's transport that holds DynamoDB calls
// until the operation waits on nothing else (bench.Gate). Elsewhere both
// do nothing.
func Park(ctx context.Context) (park, resume func()) {
	s := stepsOf(ctx)
	if s == nil {
		return func() {}, func() {}
	}
	var parked, resumed bool
	park = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.start(ctx)
		if !parked && !resumed {
			parked = true
			s.idle(1)
		}
	}
	resume = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if parked && !resumed {
			s.active++
		}
		resumed = true
	}
	return park, resume
}

// stepLoader is one loader's part in its operation's step mode
// (graph.LoaderSteps): what it knows of each key, and the keys of the open
// batch.
type stepLoader struct {
	s       *opSteps
	flush   func() // the loader's: reads the open batch
	keys    map[any]*keyState
	pending int // keys in the open batch
}

// keyState is what step mode knows of a key: whether its value is in, and
// how many callers wait for it.
type keyState struct {
	waiters int
	done    bool
}

// Loader joins a loader, whose open batch flush reads, to the operation's
// loaders (an operation may make them on their first use).
func (s *opSteps) Loader(flush func()) graph.LoaderSteps {
	l := &stepLoader{s: s, flush: flush, keys: map[any]*keyState{}}
	s.mu.Lock()
	s.loaders = append(s.loaders, l)
	s.mu.Unlock()
	return l
}

// Load calls load, which asks the loader for key, and counts its caller as
// waiting from when it calls the returned function until the batch hands
// out the key's result.
func (l *stepLoader) Load(ctx context.Context, key any, load func()) (wait func()) {
	s := l.s
	s.mu.Lock()
	s.start(ctx)
	load()
	st := l.keys[key]
	if st == nil {
		st = &keyState{}
		l.keys[key] = st
		l.pending++
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if !st.done {
			st.waiters++ // running again when the batch hands out its results
			s.idle(1)
		}
		s.mu.Unlock()
	}
}

// Prime calls prime unless key is already loaded or loading.
func (l *stepLoader) Prime(key any, prime func()) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.keys[key] == nil {
		l.keys[key] = &keyState{done: true}
		prime()
	}
}

// Batch gives a batch read's parallel DynamoDB reads to the count.
func (l *stepLoader) Batch(ctx context.Context) context.Context { return l.s.forked(ctx) }

// Read records that a batch of keys is read: their waiters count as
// running again, before they wake, and the batch's own read is done.
func (l *stepLoader) Read(keys []any) {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if st := l.keys[k]; st != nil && !st.done {
			st.done = true
			s.active += st.waiters
			st.waiters = 0
		}
	}
	s.idle(1) // the batch's own read is done
}

// flushPending starts reading the open batch, if it has keys; s.mu is held.
func (l *stepLoader) flushPending() bool {
	if l.pending == 0 {
		return false
	}
	l.pending = 0
	l.flush()
	return true
}

// scopeKey names one value whose fields gqlgen resolves: the field that
// returned it and, in a list, its position ("" for the field's own value;
// the operation's root is the nil field).
type scopeKey struct {
	field *graphql.FieldContext
	path  string
}

// scope is a value whose fields gqlgen is resolving: steps are its fields
// still to come (each plain field alone, then the resolver fields all
// together), want those of the current step not started yet and live
// those of the current step started and not done with everything below.
type scope struct {
	key   scopeKey
	owner *stepNode // the field that returned the value; nil at the root
	steps [][]string
	want  map[string]bool
	live  int
	part  *partEnd // a part's scope: its end counts once it is done
}

// stepNode is a started field: open while it runs and while a value below
// it has fields to come.
type stepNode struct {
	sc   *scope
	open int
}

// scopeSpec is a value's fields to come, worked out when the field that
// returned it ends.
type scopeSpec struct {
	key   scopeKey
	steps [][]string
	part  *partEnd
}

// start makes the operation's root scope (s.mu held).
func (s *opSteps) start(ctx context.Context) {
	if s.started || !graphql.HasOperationContext(ctx) {
		return
	}
	s.started = true
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil {
		return
	}
	var typ string
	switch oc.Operation.Operation {
	case ast.Query:
		typ = "Query"
	case ast.Mutation:
		typ = "Mutation"
	default:
		return
	}
	s.add(nil, []scopeSpec{{key: scopeKey{}, steps: rootSteps(oc, oc.Operation.SelectionSet, typ)}})
}

// rootSteps returns the root fields gqlgen resolves of sel, in its order:
// a mutation's one after another; a query's introspection fields each
// alone, then the others all together, then those gqlgen defers.
func rootSteps(oc *graphql.OperationContext, sel ast.SelectionSet, typ string) [][]string {
	var plain [][]string
	var concurrent, deferred []string
	for _, f := range graphql.CollectFields(oc, sel, []string{typ}) {
		switch {
		case f.Name == "__typename" || typ == "Mutation" && f.IsDeferred():
		case typ == "Mutation" || f.Name == "__type" || f.Name == "__schema":
			plain = append(plain, []string{f.Alias})
		case f.IsDeferred():
			deferred = append(deferred, f.Alias)
		default:
			concurrent = append(concurrent, f.Alias)
		}
	}
	return append(plain, concurrent, deferred)
}

// Part counts the fields of a part of a query with @defer, resolved apart
// (graph.OperationSteps): those sel selects on a value of type typ, in
// gqlgen's order, in a scope of their own under a context of its own (a
// marker, which adds nothing to their path); once the scope is done, the
// part counts as running until end.
func (s *opSteps) Part(ctx context.Context, typ string, sel ast.SelectionSet, child func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error)) (context.Context, func()) {
	marker := &graphql.FieldContext{Object: typ}
	ctx = graphql.WithFieldContext(ctx, marker)
	oc := graphql.GetOperationContext(ctx)
	var steps [][]string
	if child == nil {
		steps = rootSteps(oc, sel, typ)
	} else {
		steps = objectSteps(scratchContext(ctx), oc, sel, schema.Types[typ], child)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start(ctx)
	s.markers[marker] = true
	p := &partEnd{}
	if steps != nil {
		s.add(nil, []scopeSpec{{key: scopeKey{field: marker}, steps: steps, part: p}})
	}
	return ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if p.running {
			p.running = false
			s.idle(1)
		}
	}
}

// partEnd is the end of a part (Part): running from when its scope is
// done until the part's end is called.
type partEnd struct{ running bool }

// add makes the scopes of specs, below owner (s.mu held).
func (s *opSteps) add(owner *stepNode, specs []scopeSpec) {
	for _, sp := range specs {
		sc := &scope{key: sp.key, owner: owner, steps: sp.steps, part: sp.part}
		if s.advance(sc) {
			s.scopes[sp.key] = sc
			if owner != nil {
				owner.open++
			}
		}
	}
}

// advance moves sc to its next step with fields, counting them as about to
// start; false when none is left (s.mu held).
func (s *opSteps) advance(sc *scope) bool {
	for len(sc.steps) > 0 {
		st := sc.steps[0]
		sc.steps = sc.steps[1:]
		if len(st) == 0 {
			continue
		}
		sc.want = make(map[string]bool, len(st))
		for _, a := range st {
			sc.want[a] = true
		}
		s.active += len(st)
		return true
	}
	return false
}

// enter counts a field that starts: one that was about to start, or new
// work.
func (s *opSteps) enter(ctx context.Context, fc *graphql.FieldContext) *stepNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start(ctx)
	n := &stepNode{open: 1}
	if sc := s.scopes[s.scopeKeyOf(fc)]; sc != nil && sc.want[fc.Field.Alias] {
		delete(sc.want, fc.Field.Alias)
		sc.live++
		n.sc = sc
	} else {
		s.active++
	}
	return n
}

// exit counts a field that ends, its value's fields to come (specs) as
// about to start.
func (s *opSteps) exit(n *stepNode, specs []scopeSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(n, specs)
	n.open--
	if n.open == 0 {
		s.done(n)
	}
	s.idle(1)
}

// done records that field n and everything below it are done: its scope
// goes on to its next step, or is done too (s.mu held).
func (s *opSteps) done(n *stepNode) {
	for n != nil && n.sc != nil {
		sc := n.sc
		sc.live--
		if len(sc.want) > 0 || sc.live > 0 || s.advance(sc) {
			return
		}
		delete(s.scopes, sc.key)
		if sc.part != nil {
			sc.part.running = true
			s.active++
		}
		if n = sc.owner; n == nil {
			return
		}
		if n.open--; n.open > 0 {
			return
		}
	}
}

// scopeKeyOf returns the key of the scope fc's field is in (s.mu held):
// the field that returned its value, or the marker of its part, with the
// positions in the lists between; gqlgen's contexts of a root type are
// passed over (the operation's root has none above).
func (s *opSteps) scopeKeyOf(fc *graphql.FieldContext) scopeKey {
	var idx []string
	p := fc.Parent
	for p != nil && p.Index != nil {
		idx = append(idx, strconv.Itoa(*p.Index))
		p = p.Parent
	}
	for p != nil && p.Field.Field == nil && !s.markers[p] {
		p = p.Parent
	}
	slices.Reverse(idx)
	return scopeKey{field: p, path: strings.Join(idx, ".")}
}

// Field is the field middleware of step mode: it counts each field of
// the operation as it starts and ends.
func (s *opSteps) Field(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return next(ctx)
	}
	n := s.enter(ctx, fc)
	ended := false
	defer func() {
		if !ended { // a panic
			s.exit(n, nil)
		}
	}()
	res, err := next(s.forked(ctx))
	var specs []scopeSpec
	if err == nil && res != nil && len(fc.Field.Selections) > 0 && fc.Field.Definition != nil {
		specs = valueScopes(ctx, fc, res)
	}
	ended = true
	s.exit(n, specs)
	return res, err
}

// schema is the handler's schema, for the types of the values fields
// return.
var schema = graph.NewExecutableSchema(graph.Config{}).Schema()

// valueScopes works out the fields to come of the value v that field fc
// returned: one scope per object in it.
func valueScopes(ctx context.Context, fc *graphql.FieldContext, v any) []scopeSpec {
	oc := graphql.GetOperationContext(ctx)
	scratch := scratchContext(ctx)
	steps := map[string][][]string{}
	var specs []scopeSpec
	var walk func(t *ast.Type, v reflect.Value, path []string)
	walk = func(t *ast.Type, v reflect.Value, path []string) {
		for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return
			}
			v = v.Elem()
		}
		if t.Elem != nil {
			if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
				return
			}
			for i := range v.Len() {
				walk(t.Elem, v.Index(i), append(path, strconv.Itoa(i)))
			}
			return
		}
		def := schema.Types[t.NamedType]
		if def == nil {
			return
		}
		name := def.Name
		switch def.Kind {
		case ast.Object:
		case ast.Interface, ast.Union:
			// The concrete type: the Go type of the same name.
			name = v.Type().Name()
			if !slices.ContainsFunc(schema.GetPossibleTypes(def), func(d *ast.Definition) bool { return d.Name == name }) {
				return
			}
		default:
			return
		}
		st, ok := steps[name]
		if !ok {
			if fc.Child != nil {
				st = objectSteps(scratch, oc, fc.Field.Selections, schema.Types[name], fc.Child)
			}
			steps[name] = st
		}
		if st != nil {
			specs = append(specs, scopeSpec{key: scopeKey{field: fc, path: strings.Join(path, ".")}, steps: slices.Clone(st)})
		}
	}
	walk(fc.Field.Definition.Type, reflect.ValueOf(v), nil)
	return specs
}

// scratchContext is ctx for working out fields' contexts as gqlgen will,
// arguments included: an error there (the field will not start) goes
// nowhere.
func scratchContext(ctx context.Context) context.Context {
	return graphql.WithResponseContext(ctx, func(context.Context, error) *gqlerror.Error { return nil }, nil)
}

// objectSteps returns the fields gqlgen resolves of an object of type def
// that sel selects, in its order: each plain field alone, then the
// resolver fields all together; child makes their contexts. Nil when they
// cannot be worked out.
func objectSteps(ctx context.Context, oc *graphql.OperationContext, sel ast.SelectionSet, def *ast.Definition, child func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error)) [][]string {
	if def == nil {
		return nil
	}
	var plain [][]string
	var concurrent, deferred []string
	for _, f := range graphql.CollectFields(oc, sel, append([]string{def.Name}, def.Interfaces...)) {
		if f.Name == "__typename" {
			continue
		}
		c, err := child(ctx, f)
		if err != nil && strings.Contains(err.Error(), "FieldContext.Child cannot be called") {
			return nil // an abstract type's field: not worked out
		}
		if err != nil || c == nil {
			continue // its arguments are wrong: it will not start
		}
		switch {
		case c.IsResolver && f.IsDeferred():
			deferred = append(deferred, f.Alias)
		case c.IsResolver:
			concurrent = append(concurrent, f.Alias)
		default: // a plain field is resolved at once, @defer or not
			plain = append(plain, []string{f.Alias})
		}
	}
	return append(plain, concurrent, deferred)
}
