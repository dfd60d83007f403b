package incremental

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// PartFormat is how a transport writes the parts of a query with @defer.
type PartFormat uint8

const (
	// PartsUnwrapped: each incremental result of the 2022-08-24 format its
	// own response, {data, path, label, errors, hasNext} (gqlgen's, over
	// server-sent events and the WebSockets). A result at the root, whose
	// path gqlgen's response leaves out when empty, is one response per
	// root field it delivers, at that field's path.
	PartsUnwrapped PartFormat = iota
	// Parts20220824: the 2022-08-24 format (graphql-js 17's
	// legacyExecuteIncrementally): each incremental result one response,
	// which the transport wraps in incremental.
	Parts20220824
	// PartsV02: graphql-js 17's format (experimentalExecuteIncrementally):
	// each response's payload's pending, incremental and completed are
	// read from Parts.
	PartsV02
)

// Parts is how a transport that writes a query's parts in one
// multipart/mixed body names their format to the pipeline (WithParts)
// and, in graphql-js 17's, reads what each payload has besides its
// response (Take).
type Parts struct {
	format PartFormat
	mu     sync.Mutex
	next   *PayloadV02
}

// NewParts returns the Parts of a request answered in format.
func NewParts(format PartFormat) *Parts { return &Parts{format: format} }

type partsKey struct{}

// WithParts returns ctx carrying p: its operation's parts are written in
// p's format. Without, they are PartsUnwrapped.
func WithParts(ctx context.Context, p *Parts) context.Context {
	return context.WithValue(ctx, partsKey{}, p)
}

func partsOf(ctx context.Context) *Parts {
	p, _ := ctx.Value(partsKey{}).(*Parts)
	return p
}

func (p *Parts) put(pl *PayloadV02) {
	p.mu.Lock()
	p.next = pl
	p.mu.Unlock()
}

// Take returns what the payload of the response just handed over has
// besides it, in graphql-js 17's format: nil for an operation answered in
// one response.
func (p *Parts) Take() *PayloadV02 {
	p.mu.Lock()
	defer p.mu.Unlock()
	pl := p.next
	p.next = nil
	return pl
}

// PayloadV02 is what a payload of graphql-js 17's format has besides its
// response's data, errors, hasNext and extensions: the initial one's
// pending; a later one's pending, incremental and completed.
type PayloadV02 struct {
	Pending     []PendingV02
	Incremental []IncrementalV02
	Completed   []CompletedV02
}

// PendingV02 announces a deferred fragment.
type PendingV02 struct {
	ID    string   `json:"id"`
	Path  ast.Path `json:"path"`
	Label *string  `json:"label,omitempty"`
}

// IncrementalV02 delivers fields of the fragment id, at its path and then
// subPath.
type IncrementalV02 struct {
	ID      string          `json:"id"`
	Data    json.RawMessage `json:"data"`
	Errors  gqlerror.List   `json:"errors,omitempty"`
	SubPath ast.Path        `json:"subPath,omitempty"`
}

// CompletedV02 ends the fragment id: with the error that nulled it, if one
// did (its fields then never come).
type CompletedV02 struct {
	ID     string        `json:"id"`
	Errors gqlerror.List `json:"errors,omitempty"`
}

// publisherV02 gives delivery groups their ids (IncrementalPublisher).
type publisherV02 struct {
	ids  map[*deliveryGroup]string
	next int
}

func (p *publisherV02) id(g *deliveryGroup) string {
	if p.ids == nil {
		p.ids = map[*deliveryGroup]string{}
	}
	id, ok := p.ids[g]
	if !ok {
		id = strconv.Itoa(p.next)
		p.next++
		p.ids[g] = id
	}
	return id
}

func (p *publisherV02) pending(groups []*deliveryGroup) []PendingV02 {
	out := make([]PendingV02, 0, len(groups))
	for _, g := range groups {
		out = append(out, PendingV02{ID: p.id(g), Path: append(ast.Path{}, g.path...), Label: g.usage.label})
	}
	return out
}

// best is the id a task's data goes under: of its groups still pending,
// the one deepest in the data (the delivered group's on a tie), and the
// rest of the task's path below it.
func (p *publisherV02) best(id string, g *deliveryGroup, t *incTask) (string, ast.Path) {
	depth := len(g.path)
	for _, o := range t.groups {
		if o == g {
			continue
		}
		if oid, ok := p.ids[o]; ok && len(o.path) > depth {
			depth, id = len(o.path), oid
		}
	}
	if len(t.path) == depth {
		return id, nil
	}
	return id, append(ast.Path{}, t.path[depth:]...)
}

// payloadV02 answers events in graphql-js 17's format.
func (in *incremental) payloadV02(events []queueEvent) *graphql.Response {
	in.mu.Lock()
	defer in.mu.Unlock()
	pl := &PayloadV02{}
	var errs gqlerror.List
	hasNext := true
	for _, ev := range events {
		switch ev.kind {
		case groupValues:
			id := in.ids.id(ev.group)
			for _, t := range ev.values {
				best, sub := in.ids.best(id, ev.group, t)
				pl.Incremental = append(pl.Incremental, IncrementalV02{ID: best, Data: t.data, Errors: t.errs, SubPath: sub})
				errs = append(errs, t.errs...)
			}
		case groupSuccess:
			pl.Completed = append(pl.Completed, CompletedV02{ID: in.ids.id(ev.group)})
			delete(in.ids.ids, ev.group)
			pl.Pending = append(pl.Pending, in.ids.pending(ev.newGroups)...)
		case groupFailure:
			e := asGQLError(ev.err)
			pl.Completed = append(pl.Completed, CompletedV02{ID: in.ids.id(ev.group), Errors: gqlerror.List{e}})
			delete(in.ids.ids, ev.group)
			errs = append(errs, e)
		case termination:
			hasNext = false
			in.ended = true
		}
	}
	in.parts.put(pl)
	// The response carries the payload's errors (for the operation's log
	// line); the transport writes the payload.
	return &graphql.Response{Data: json.RawMessage("null"), Errors: errs, HasNext: &hasNext}
}

// legacyParts answers events in the 2022-08-24 format: one response per
// incremental result (a group's data, or its null with the error that
// nulled it), hasNext false on the last one.
func (in *incremental) legacyParts(events []queueEvent) []*graphql.Response {
	var out []*graphql.Response
	done := false
	for _, ev := range events {
		label := ""
		if ev.group != nil && ev.group.usage.label != nil {
			label = *ev.group.usage.label
		}
		switch ev.kind {
		case groupValues:
			for _, t := range ev.values {
				out = append(out, in.unwrap(&graphql.Response{Data: t.data, Path: ev.group.path, Label: label, Errors: t.errs})...)
			}
		case groupFailure:
			out = append(out, &graphql.Response{Data: json.RawMessage("null"), Path: ev.group.path, Label: label,
				Errors: gqlerror.List{asGQLError(ev.err)}})
		case termination:
			done = true
		}
	}
	if done {
		in.ended = true
		if len(out) == 0 { // never seen: a group delivered has data or failed
			out = append(out, &graphql.Response{})
		}
	}
	for i, r := range out {
		r.HasNext = new(!done || i < len(out)-1)
	}
	return out
}

// unwrap splits, for PartsUnwrapped, a result at the root into one per
// root field it delivers (gqlgen's response leaves an empty path out).
func (in *incremental) unwrap(r *graphql.Response) []*graphql.Response {
	if in.format != PartsUnwrapped || len(r.Path) > 0 {
		return []*graphql.Response{r}
	}
	keys, values := splitObject(r.Data)
	out := make([]*graphql.Response, len(keys))
	for i, k := range keys {
		out[i] = &graphql.Response{Data: values[i], Path: ast.Path{ast.PathName(k)}, Label: r.Label}
	}
	if len(out) == 0 {
		return []*graphql.Response{r}
	}
	out[0].Errors = r.Errors
	return out
}

// splitObject returns the members of a JSON object, in order.
func splitObject(raw json.RawMessage) ([]string, []json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil
	}
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		var v json.RawMessage
		if err != nil || !ok || dec.Decode(&v) != nil {
			return nil, nil
		}
		keys, values = append(keys, k), append(values, v)
	}
	return keys, values
}

func asGQLError(err error) *gqlerror.Error {
	if e, ok := err.(*gqlerror.Error); ok {
		return e
	}
	return &gqlerror.Error{Message: err.Error()}
}

// pathKey writes path as a map key.
func pathKey(path ast.Path) string {
	var b strings.Builder
	for _, el := range path {
		switch el := el.(type) {
		case ast.PathName:
			b.WriteString("." + string(el))
		case ast.PathIndex:
			b.WriteString("[" + strconv.Itoa(int(el)) + "]")
		}
	}
	return b.String()
}

// objectAt returns the object at path in tree, if there is one.
func objectAt(tree any, path ast.Path) (map[string]any, bool) {
	at := tree
	for _, el := range path {
		switch el := el.(type) {
		case ast.PathName:
			m, ok := at.(map[string]any)
			if !ok {
				return nil, false
			}
			at = m[string(el)]
		case ast.PathIndex:
			l, ok := at.([]any)
			if !ok || int(el) < 0 || int(el) >= len(l) {
				return nil, false
			}
			at = l[el]
		}
	}
	m, ok := at.(map[string]any)
	return m, ok
}

// nullStops reports whether the null of an error at rel, a path below a
// run's root whose fields sel selects, stops below the root: some
// position on the way is nullable.
func nullStops(doc *ast.QueryDocument, sel ast.SelectionSet, rel ast.Path) bool {
	var t *ast.Type
	for _, el := range rel {
		switch el := el.(type) {
		case ast.PathName:
			f := fieldIn(doc, sel, string(el))
			if f == nil || f.Definition == nil {
				return true
			}
			t, sel = f.Definition.Type, f.SelectionSet
		case ast.PathIndex:
			if t == nil || t.Elem == nil {
				return true
			}
			t = t.Elem
		}
		if !t.NonNull {
			return true
		}
	}
	return false
}

// fieldIn finds the field of response key key in sel, through fragments.
func fieldIn(doc *ast.QueryDocument, sel ast.SelectionSet, key string) *ast.Field {
	for _, s := range sel {
		var f *ast.Field
		switch s := s.(type) {
		case *ast.Field:
			if s.Alias == key {
				return s
			}
		case *ast.InlineFragment:
			f = fieldIn(doc, s.SelectionSet, key)
		case *ast.FragmentSpread:
			if d := doc.Fragments.ForName(s.Name); d != nil {
				f = fieldIn(doc, d.SelectionSet, key)
			}
		}
		if f != nil {
			return f
		}
	}
	return nil
}
