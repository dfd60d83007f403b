package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// strictInputs applies the GraphQL spec's input coercion, which gqlparser
// applies loosely, to the variables and literals of an operation before it
// runs. gqlparser matches enum variables without regard to case ("done" for
// DONE; gqlgen's generated unmarshaler then finds no such value and yields
// ""), takes "1" for an Int and a number for a String, and lets an Int
// literal or variable exceed 32 bits. Here, for every type of the schema:
//   - an enum value is exactly one of the enum's names;
//   - an Int is a JSON number or literal with no fractional part within
//     32 bits (1.0 is 1, as in graphql-js);
//   - a Float is a number, a String a string, a Boolean true or false;
//   - an ID a string or an integer;
//
// in variables (nested in input objects and lists too) and literals alike.
// A value that is not is refused as GRAPHQL_VALIDATION_FAILED.
type strictInputs struct {
	schema *ast.Schema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
} = strictInputs{}

func (strictInputs) ExtensionName() string { return "StrictInputs" }

func (strictInputs) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters writes integral JSON numbers (1.0, 1e2) as
// integers: JSON does not tell 1.0 from 1, and gqlparser refuses "1.0" for
// an Int.
func (strictInputs) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	for k, v := range p.Variables {
		p.Variables[k] = integral(v)
	}
	return nil
}

func integral(v any) any {
	switch v := v.(type) {
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return v
		}
		if f, err := v.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
	case map[string]any:
		for k, e := range v {
			v[k] = integral(e)
		}
	case []any:
		for i, e := range v {
			v[i] = integral(e)
		}
	}
	return v
}

func (s strictInputs) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	for _, d := range oc.Operation.VariableDefinitions {
		v, ok := oc.Variables[d.Variable]
		if !ok {
			continue
		}
		if bad := s.check(d.Type, v); bad != nil {
			where := ""
			if bad.at != "" {
				where = fmt.Sprintf(" at \"%s%s\"", d.Variable, bad.at)
			}
			err := invalidInput(fmt.Sprintf("Variable \"$%s\" got invalid value %s%s; %s", d.Variable, model.ShowInput(bad.value), where, bad.msg), d.Position)
			err.Path = ast.Path{ast.PathName("variable"), ast.PathName(d.Variable)}
			return err
		}
	}
	lw := literalWalk{doc: oc.Doc, seen: map[string]bool{}}
	lw.selections(oc.Operation.SelectionSet)
	if lw.bad != nil {
		return invalidInput(fmt.Sprintf("Int cannot represent non 32-bit signed integer value: %s", lw.bad.Raw), lw.bad.Position)
	}
	return nil
}

func invalidInput(msg string, pos *ast.Position) *gqlerror.Error {
	err := &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": errcode.ValidationFailed}}
	if pos != nil {
		err.Locations = []gqlerror.Location{{Line: pos.Line, Column: pos.Column}}
	}
	return err
}

// badInput is a value that is not of its type: where it is below the
// variable (".status", "[2]"), the value and why.
type badInput struct {
	at    string
	value any
	msg   string
}

// check returns why v is not a value of type t, or nil.
func (s strictInputs) check(t *ast.Type, v any) *badInput {
	if v == nil {
		return nil // gqlparser refuses null where it is not allowed
	}
	if t.Elem != nil {
		if list, ok := v.([]any); ok {
			for i, e := range list {
				if bad := s.check(t.Elem, e); bad != nil {
					bad.at = fmt.Sprintf("[%d]%s", i, bad.at)
					return bad
				}
			}
			return nil
		}
		return s.check(t.Elem, v) // a single value is a list of one
	}
	def := s.schema.Types[t.NamedType]
	if def == nil {
		return nil
	}
	msg := ""
	switch def.Kind {
	case ast.Enum:
		if str, ok := v.(string); !ok || def.EnumValues.ForName(str) == nil {
			msg = fmt.Sprintf("Value %s does not exist in %q enum.", model.ShowInput(v), def.Name)
		}
	case ast.InputObject:
		m, ok := v.(map[string]any)
		if !ok {
			msg = fmt.Sprintf("Expected type %q to be an object.", def.Name)
			break
		}
		for _, f := range def.Fields {
			if e, ok := m[f.Name]; ok {
				if bad := s.check(f.Type, e); bad != nil {
					bad.at = "." + f.Name + bad.at
					return bad
				}
			}
		}
	case ast.Scalar:
		msg = checkScalar(def.Name, v)
	}
	if msg == "" {
		return nil
	}
	return &badInput{value: v, msg: msg}
}

// checkScalar returns why v is not a value of a built-in scalar, or "".
// Custom scalars (Date, Time) check their values in their unmarshalers.
func checkScalar(name string, v any) string {
	switch name {
	case "Int":
		n, ok := integer(v)
		if !ok {
			return fmt.Sprintf("Int cannot represent non-integer value: %s", model.ShowInput(v))
		}
		if n < math.MinInt32 || n > math.MaxInt32 {
			return fmt.Sprintf("Int cannot represent non 32-bit signed integer value: %s", model.ShowInput(v))
		}
	case "Float":
		switch v.(type) {
		case json.Number, float64, float32, int, int32, int64:
		default:
			return fmt.Sprintf("Float cannot represent non numeric value: %s", model.ShowInput(v))
		}
	case "String":
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("String cannot represent a non string value: %s", model.ShowInput(v))
		}
	case "Boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("Boolean cannot represent a non boolean value: %s", model.ShowInput(v))
		}
	case "ID":
		if _, ok := v.(string); ok {
			return ""
		}
		if _, ok := integer(v); !ok {
			return fmt.Sprintf("ID cannot represent value: %s", model.ShowInput(v))
		}
	}
	return ""
}

// integer returns v as an int64 when it is a number without a fractional
// part (a string is not a number).
func integer(v any) (int64, bool) {
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
			return int64(v), true
		}
	}
	return 0, false
}

// literalWalk finds the first Int literal (validated by gqlparser, which
// reads it as 64 bits) outside 32 bits in the selections of an operation.
type literalWalk struct {
	doc  *ast.QueryDocument
	seen map[string]bool
	bad  *ast.Value
}

func (w *literalWalk) selections(set ast.SelectionSet) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			for _, a := range s.Arguments {
				w.value(a.Value)
			}
			w.directives(s.Directives)
			w.selections(s.SelectionSet)
		case *ast.InlineFragment:
			w.directives(s.Directives)
			w.selections(s.SelectionSet)
		case *ast.FragmentSpread:
			w.directives(s.Directives)
			if f := w.doc.Fragments.ForName(s.Name); f != nil && !w.seen[s.Name] {
				w.seen[s.Name] = true
				w.selections(f.SelectionSet)
			}
		}
	}
}

func (w *literalWalk) directives(ds ast.DirectiveList) {
	for _, d := range ds {
		for _, a := range d.Arguments {
			w.value(a.Value)
		}
	}
}

func (w *literalWalk) value(v *ast.Value) {
	if v == nil || w.bad != nil {
		return
	}
	if v.Kind == ast.IntValue && v.Definition != nil && v.Definition.Name == "Int" {
		if n, err := strconv.ParseInt(v.Raw, 10, 64); err != nil || n < math.MinInt32 || n > math.MaxInt32 {
			w.bad = v
		}
	}
	for _, c := range v.Children {
		w.value(c.Value)
	}
}
