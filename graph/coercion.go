package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
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
		if msg := s.check(d.Type, v); msg != "" {
			return invalidInput(fmt.Sprintf("Variable \"$%s\" got invalid value %s; %s", d.Variable, show(v), msg), d.Position)
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
	err := &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}}
	if pos != nil {
		err.Locations = []gqlerror.Location{{Line: pos.Line, Column: pos.Column}}
	}
	return err
}

// show writes a variable's value as JSON, as the client sent it.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) > 100 {
		return fmt.Sprintf("of type %T", v)
	}
	return string(b)
}

// check returns why v is not a value of type t, or "".
func (s strictInputs) check(t *ast.Type, v any) string {
	if v == nil {
		return "" // gqlparser refuses null where it is not allowed
	}
	if t.Elem != nil {
		if list, ok := v.([]any); ok {
			for i, e := range list {
				if msg := s.check(t.Elem, e); msg != "" {
					return fmt.Sprintf("at [%d]: %s", i, msg)
				}
			}
			return ""
		}
		return s.check(t.Elem, v) // a single value is a list of one
	}
	def := s.schema.Types[t.NamedType]
	if def == nil {
		return ""
	}
	switch def.Kind {
	case ast.Enum:
		if str, ok := v.(string); ok && def.EnumValues.ForName(str) != nil {
			return ""
		}
		return fmt.Sprintf("Value %s does not exist in %q enum.", show(v), def.Name)
	case ast.InputObject:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("Expected type %q to be an object.", def.Name)
		}
		for _, f := range def.Fields {
			if e, ok := m[f.Name]; ok {
				if msg := s.check(f.Type, e); msg != "" {
					return fmt.Sprintf("at %q: %s", f.Name, msg)
				}
			}
		}
		return ""
	case ast.Scalar:
		return checkScalar(def.Name, v)
	}
	return ""
}

// checkScalar returns why v is not a value of a built-in scalar, or "".
// Custom scalars (Date, Time) check their values in their unmarshalers.
func checkScalar(name string, v any) string {
	switch name {
	case "Int":
		n, ok := integer(v)
		if !ok {
			return fmt.Sprintf("Int cannot represent non-integer value: %s", show(v))
		}
		if n < math.MinInt32 || n > math.MaxInt32 {
			return fmt.Sprintf("Int cannot represent non 32-bit signed integer value: %s", show(v))
		}
	case "Float":
		switch v.(type) {
		case json.Number, float64, float32, int, int32, int64:
		default:
			return fmt.Sprintf("Float cannot represent non numeric value: %s", show(v))
		}
	case "String":
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("String cannot represent a non string value: %s", show(v))
		}
	case "Boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("Boolean cannot represent a non boolean value: %s", show(v))
		}
	case "ID":
		if _, ok := v.(string); ok {
			return ""
		}
		if _, ok := integer(v); !ok {
			return fmt.Sprintf("ID cannot represent value: %s", show(v))
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
