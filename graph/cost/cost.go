// Package cost reads the weights of the schema's cost directives, IBM's
// GraphQL Cost Directives as schema.graphqls declares them: @cost(weight:)
// on a field (its own price, 1 without), and @listSize on a list field
// (how many elements it may hold: the largest of its slicing arguments
// given, such as a connection's first and last, or else its assumedSize).
//
// One measure prices an operation twice, and both read these weights:
// before it runs, its estimate (the complexity limit, graph's
// priced): each field its weight plus its selection's estimate times
// its list size, the sized fields' whole selection (pageInfo too: at least
// what the spec's sizedFields charge); and after it ran, its actual cost
// (Counter, which the pipeline's field middleware feeds): the weight of
// every field that ran, so that a list is priced by the elements it really
// held. Every size being an upper bound, the estimate is at least the
// actual cost (graph's TestEstimateBoundsActual).
package cost

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/vektah/gqlparser/v2/ast"
)

// The directives' names and arguments, as the IBM GraphQL Cost Directives
// specification names them.
const (
	DirectiveCost     = "cost"
	DirectiveListSize = "listSize"
)

// Field is what the directives say of one field of an object type.
type Field struct {
	// Weight is @cost(weight:), an integer; 1 without.
	Weight int
	// List: the field has @listSize.
	List bool
	// Slicing are its slicing arguments (@listSize(slicingArguments:)).
	Slicing []string
	// Assumed is @listSize(assumedSize:): the list's size without a
	// slicing argument; 0 without.
	Assumed int
	// Sized are @listSize(sizedFields:): the lists of the returned object
	// the size counts (a connection's edges and nodes).
	Sized []string
}

// Size is how many elements the estimate charges the list for: the
// largest slicing argument given (arg: its value, and whether it is
// given and not null), at least 1 and at most maxSize, or else its
// assumed size, or 1.
func (f Field) Size(arg func(name string) (int, bool), maxSize int) int {
	n, given := 0, false
	for _, a := range f.Slicing {
		if v, ok := arg(a); ok {
			n, given = max(n, v), true
		}
	}
	switch {
	case given:
		return max(min(n, maxSize), 1)
	case f.Assumed > 0:
		return f.Assumed
	}
	return 1
}

// Estimate is the field's estimate: its weight plus its selection's
// (child) times its list's size (1 for a field that is no list).
func (f Field) Estimate(child, size int) int { return f.Weight + child*size }

// Weights are the cost directives of a schema's object types' fields.
type Weights struct {
	fields map[string]map[string]Field // by type, then field; only fields with a directive
}

// Read returns the weights of s's directives, or an error naming the
// first directive that is not valid (a weight that is no positive
// integer, a slicing argument the field does not have).
func Read(s *ast.Schema) (*Weights, error) {
	w := &Weights{fields: map[string]map[string]Field{}}
	for name, def := range s.Types {
		if def.Kind != ast.Object || strings.HasPrefix(name, "__") {
			continue
		}
		for _, fd := range def.Fields {
			f, ok, err := fieldOf(fd)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", name, fd.Name, err)
			}
			if ok {
				if w.fields[name] == nil {
					w.fields[name] = map[string]Field{}
				}
				w.fields[name][fd.Name] = f
			}
		}
	}
	return w, nil
}

// MustRead is Read that panics on an error: for the schema the server is
// built with, which a test checks.
func MustRead(s *ast.Schema) *Weights {
	w, err := Read(s)
	if err != nil {
		panic("cost directives: " + err.Error())
	}
	return w
}

func fieldOf(fd *ast.FieldDefinition) (Field, bool, error) {
	f, ok := Field{Weight: 1}, false
	if d := fd.Directives.ForName(DirectiveCost); d != nil {
		ok = true
		arg := d.Arguments.ForName("weight")
		if arg == nil || arg.Value == nil {
			return f, false, fmt.Errorf("@cost without a weight")
		}
		n, err := strconv.Atoi(arg.Value.Raw)
		if err != nil || n < 1 {
			return f, false, fmt.Errorf("@cost(weight: %q): the server's weights are positive integers", arg.Value.Raw)
		}
		f.Weight = n
	}
	if d := fd.Directives.ForName(DirectiveListSize); d != nil {
		ok, f.List = true, true
		if a := d.Arguments.ForName("assumedSize"); a != nil && a.Value != nil {
			n, err := strconv.Atoi(a.Value.Raw)
			if err != nil || n < 1 {
				return f, false, fmt.Errorf("@listSize(assumedSize: %s): a positive integer", a.Value.Raw)
			}
			f.Assumed = n
		}
		f.Slicing = listArg(d.Arguments.ForName("slicingArguments"))
		f.Sized = listArg(d.Arguments.ForName("sizedFields"))
		for _, s := range f.Slicing {
			if fd.Arguments.ForName(s) == nil {
				return f, false, fmt.Errorf("@listSize slices by %q, which is no argument of the field", s)
			}
		}
		if f.Assumed == 0 && len(f.Slicing) == 0 {
			return f, false, fmt.Errorf("@listSize without assumedSize or slicingArguments bounds nothing")
		}
	}
	return f, ok, nil
}

// listArg is a list-of-strings argument's values.
func listArg(a *ast.Argument) []string {
	if a == nil || a.Value == nil {
		return nil
	}
	var out []string
	for _, c := range a.Value.Children {
		out = append(out, c.Value.Raw)
	}
	return out
}

// Field returns what the directives say of typ.field (a weight of 1 and
// no list without any).
func (w *Weights) Field(typ, field string) Field {
	if f, ok := w.fields[typ][field]; ok {
		return f
	}
	return Field{Weight: 1}
}

// Weight is typ.field's weight, as the actual cost counts it.
func (w *Weights) Weight(typ, field string) int {
	if m, ok := w.fields[typ]; ok {
		if f, ok := m[field]; ok {
			return f.Weight
		}
	}
	return 1
}

// Lists returns the fields with @listSize, as "Type.field".
func (w *Weights) Lists() []string {
	var out []string
	for typ, m := range w.fields {
		for name, f := range m {
			if f.List {
				out = append(out, typ+"."+name)
			}
		}
	}
	return out
}

// Counter adds up an operation's actual cost: the weight of each field
// that ran. Safe for concurrent use (fields resolve concurrently).
type Counter struct{ n atomic.Int64 }

// Add adds n.
func (c *Counter) Add(n int) { c.n.Add(int64(n)) }

// Total is the cost counted so far.
func (c *Counter) Total() int { return int(c.n.Load()) }
