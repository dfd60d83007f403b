package dispatch

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/graph/exec"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The scopes of the dispatch: the values whose fields gqlgen is resolving,
// so that a field about to start counts before its parent's count ends
// (see the package's comment, "a field").

// scopeKey names one value whose fields gqlgen resolves: the field that
// returned it and, in a list, its position (none for the field's own value;
// the operation's root is the nil field): one index in at (plus one), more
// (a list of lists) in path.
type scopeKey struct {
	field *graphql.FieldContext
	at    int32
	path  string
}

// keyAt is the key of the value of field at the positions idx, outermost
// first.
func keyAt(field *graphql.FieldContext, idx []int) scopeKey {
	switch len(idx) {
	case 0:
		return scopeKey{field: field}
	case 1:
		return scopeKey{field: field, at: int32(idx[0]) + 1}
	}
	parts := make([]string, len(idx))
	for i, n := range idx {
		parts[i] = strconv.Itoa(n)
	}
	return scopeKey{field: field, path: strings.Join(parts, ".")}
}

// scope is a value whose fields gqlgen is resolving: steps are its fields
// still to come (each plain field alone, then the resolver fields all
// together), want those of the current step not started yet and live
// those of the current step started and not done with everything below.
type scope struct {
	key   scopeKey
	owner *fieldNode // the field that returned the value; nil at the root
	steps [][]string
	want  map[string]bool
	live  int
	part  *partEnd // a part's scope: its end counts once it is done
	// opaque: a field of it returned a value whose fields could not be
	// worked out (an abstract type's), so its later fields, which gqlgen
	// starts once that value is done, count only as they start (counted
	// before, they held the batches until the safety net).
	opaque bool
}

// fieldNode is a started field: open while it runs and while a value below
// it has fields to come.
type fieldNode struct {
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
func (s *opDispatch) start(ctx context.Context) {
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

// add makes the scopes of specs, below owner (s.mu held).
func (s *opDispatch) add(owner *fieldNode, specs []scopeSpec) {
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
func (s *opDispatch) advance(sc *scope) bool {
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
		if !sc.opaque {
			s.active += len(st)
		}
		return true
	}
	return false
}

// enter counts a field that starts: one that was about to start, or new
// work.
func (s *opDispatch) enter(ctx context.Context, fc *graphql.FieldContext) *fieldNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start(ctx)
	n := &fieldNode{open: 1}
	s.moves++
	if sc := s.scopes[s.scopeKeyOf(fc)]; sc != nil && sc.want[fc.Field.Alias] {
		delete(sc.want, fc.Field.Alias)
		sc.live++
		n.sc = sc
		if sc.opaque {
			s.active++ // not counted before it started (opaque)
		}
	} else {
		s.active++
	}
	return n
}

// exit counts a field that ends, its value's fields to come (specs) as
// about to start. A subscription's root field (a live event's resolution,
// Part) returns a stream whose event gqlgen resolves in the context of the
// operation, not of the field: its fields' scope is the one the field is
// in (the part's), which the field's own end leaves with nothing to come;
// outside a part they count only as they start.
func (s *opDispatch) exit(n *fieldNode, specs []scopeSpec, opaque, stream bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if opaque && n.sc != nil {
		n.sc.opaque = true
	}
	if stream && n.sc == nil {
		specs = nil
	}
	if stream {
		for i := range specs {
			specs[i].key = n.sc.key
		}
	}
	s.add(n, specs)
	n.open--
	if n.open == 0 {
		s.done(n)
	}
	s.idle(1)
}

// done records that field n and everything below it are done: its scope
// goes on to its next step, or is done too (s.mu held).
func (s *opDispatch) done(n *fieldNode) {
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
func (s *opDispatch) scopeKeyOf(fc *graphql.FieldContext) scopeKey {
	var buf [2]int
	idx := buf[:0]
	p := fc.Parent
	for p != nil && p.Index != nil {
		idx = append(idx, *p.Index)
		p = p.Parent
	}
	for p != nil && p.Field.Field == nil && !s.markers[p] {
		p = p.Parent
	}
	slices.Reverse(idx)
	return keyAt(p, idx)
}

// Field is the field middleware of the dispatch: it counts each field of
// the operation as it starts and ends.
func (s *opDispatch) Field(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return next(ctx)
	}
	n := s.enter(ctx, fc)
	ended := false
	defer func() {
		if !ended { // a panic
			s.exit(n, nil, false, false)
		}
	}()
	res, err := next(s.forked(ctx))
	var specs []scopeSpec
	opaque := false
	if err == nil && res != nil && len(fc.Field.Selections) > 0 && fc.Field.Definition != nil {
		specs, opaque = valueScopes(ctx, fc, res)
	}
	ended = true
	s.exit(n, specs, opaque, fc.Object == "Subscription")
	return res, err
}

// schema is the handler's schema, for the types of the values fields
// return.
var schema = exec.NewExecutableSchema(exec.Config{}).Schema()

// valueScopes works out the fields to come of the value v that field fc
// returned: one scope per object in it; opaque when an object's fields
// could not be worked out (see scope.opaque).
func valueScopes(ctx context.Context, fc *graphql.FieldContext, v any) (_ []scopeSpec, opaque bool) {
	oc := graphql.GetOperationContext(ctx)
	scratch := scratchContext(ctx)
	steps := map[string][][]string{}
	var specs []scopeSpec
	var walk func(t *ast.Type, v reflect.Value, path []int)
	walk = func(t *ast.Type, v reflect.Value, path []int) {
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
				walk(t.Elem, v.Index(i), append(path, i))
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
				opaque = true
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
			specs = append(specs, scopeSpec{key: keyAt(fc, path), steps: slices.Clone(st)})
		} else if fc.Child != nil {
			opaque = true
		}
	}
	walk(fc.Field.Definition.Type, reflect.ValueOf(v), nil)
	return specs, opaque
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
		case !loaders.Counted(c):
			// A plain leaf: it reads nothing, and is not counted.
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
