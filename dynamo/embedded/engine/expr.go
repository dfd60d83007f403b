package engine

import (
	"maps"
	"slices"
	"strings"

	"github.com/truora/minidyn/interpreter"
	"github.com/truora/minidyn/interpreter/language"
)

// exprs is a call's expression attribute names and values, which its
// expressions (key condition, filter, condition, update, projection)
// share. Parsing and evaluation are minidyn's interpreter's, on one item
// at a time.
type exprs struct {
	names  map[string]string
	values attrs
	// proj is the call's projection, parsed once for its items (nil: parsed
	// for each, as a write's).
	proj *projCache
}

// check checks the call's placeholders as DynamoDB does: every one used
// is defined, every one defined is used, every value well formed.
func (x exprs) check(texts ...string) error {
	usedNames, usedValues := map[string]bool{}, map[string]bool{}
	any := false
	for _, s := range texts {
		if s == "" {
			continue
		}
		any = true
		for i := 0; i < len(s); i++ {
			if s[i] != '#' && s[i] != ':' {
				continue
			}
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			p := s[i:j]
			if p[0] == '#' {
				if _, ok := x.names[p]; !ok {
					return validation("Invalid expression: An expression attribute name used in the document path is not defined; attribute name: %s", p)
				}
				usedNames[p] = true
			} else {
				if _, ok := x.values[p]; !ok {
					return validation("Invalid expression: An expression attribute value used in expression is not defined; attribute value: %s", p)
				}
				usedValues[p] = true
			}
			i = j - 1
		}
	}
	if !any && x.names != nil {
		return validation("ExpressionAttributeNames can only be specified when using expressions")
	}
	if !any && x.values != nil {
		return validation("ExpressionAttributeValues can only be specified when using expressions")
	}
	for n := range x.names {
		if !usedNames[n] {
			return validation("Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}", n)
		}
	}
	for n, v := range x.values {
		if !usedValues[n] {
			return validation("Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}", n)
		}
		if err := checkValue(v); err != nil {
			return validation("ExpressionAttributeValues contains invalid value: %s for key %s", err.(*Error).Message, n)
		}
	}
	return nil
}

// condition is a parsed condition or filter expression; nil matches
// every item.
type condition = *language.ConditionalExpression

// parseCondition parses a condition or filter expression ("": none).
func parseCondition(label, s string) (condition, error) {
	if s == "" {
		return nil, nil
	}
	p := language.NewParser(language.NewLexer(s))
	c := p.ParseConditionalExpression()
	if len(p.Errors()) > 0 || c.Expression == nil {
		return nil, validation("Invalid %s: Syntax error; %s", label, strings.Join(p.Errors(), "; "))
	}
	return c, nil
}

// env is the interpreter's environment for one item: its attributes, the
// call's values and names.
func (x exprs) env(a attrs) (*language.Environment, error) {
	env := language.NewEnvironment()
	env.Aliases = x.names
	if env.Aliases == nil {
		env.Aliases = map[string]string{}
	}
	if err := env.AddAttributes(a); err != nil {
		return nil, validation("the embedded store cannot evaluate an expression on this item: %v", err)
	}
	if err := env.AddAttributes(x.values); err != nil {
		return nil, validation("ExpressionAttributeValues contains invalid value: %v", err)
	}
	return env, nil
}

// match tells whether item a (nil: no item) satisfies c (cond.go).
func (x exprs) match(c condition, a attrs) (bool, error) {
	if c == nil {
		return true, nil
	}
	return x.eval(c.Expression, a)
}

// update is a parsed update expression.
type update = *language.UpdateStatement

// parseUpdate parses an update expression and returns it with the
// top-level attributes its actions change; an action on a key attribute
// is a ValidationException.
func parseUpdate(s string, key schema, names map[string]string) (update, []string, error) {
	p := language.NewUpdateParser(language.NewLexer(s))
	u := p.ParseUpdateExpression()
	if len(p.Errors()) > 0 {
		return nil, nil, validation("Invalid UpdateExpression: Syntax error; %s", strings.Join(p.Errors(), "; "))
	}
	ue, ok := u.Expression.(*language.UpdateExpression)
	if !ok {
		return nil, nil, validation("Invalid UpdateExpression: Syntax error")
	}
	var changed []string
	for _, act := range ue.Expressions {
		a, ok := act.(*language.ActionExpression)
		if !ok {
			return nil, nil, validation("Invalid UpdateExpression: Syntax error")
		}
		root := a.Left
		for {
			ix, ok := root.(*language.IndexExpression)
			if !ok {
				break
			}
			root = ix.Left
		}
		id, ok := root.(*language.Identifier)
		if !ok {
			return nil, nil, validation("Invalid UpdateExpression: Syntax error")
		}
		name := id.Value
		if n, ok := names[name]; ok {
			name = n
		}
		if name == key.hash.name || name == key.rng.name {
			return nil, nil, validation("One or more parameter values were invalid: Cannot update attribute %s. This attribute is part of the key", name)
		}
		changed = append(changed, name)
	}
	return u, changed, nil
}

// apply returns item a (its key at least) after the update u.
func (x exprs) apply(u update, a attrs) (attrs, error) {
	env, err := x.env(a)
	if err != nil {
		return nil, err
	}
	if r := language.EvalUpdate(u, env); r.Type() == language.ObjectTypeError {
		msg := r.Inspect()
		if e, ok := r.(*language.Error); ok {
			msg = e.Message
		}
		return nil, validation("%s", msg)
	}
	// The environment holds the item after the update, the values beside
	// it: a removed attribute is gone from it.
	out := attrs{}
	exclude := make(map[string]bool, len(x.values))
	for n := range x.values {
		exclude[n] = true
	}
	env.Apply(out, x.names, exclude)
	dropEmptySets(out)
	return out, nil
}

// dropEmptySets removes the sets a DELETE emptied: DynamoDB keeps no empty
// set (the attribute is gone). (minidyn's evaluator applies no DELETE of a
// nested path; the store makes none.)
func dropEmptySets(a attrs) {
	for k, v := range a {
		switch {
		case v.SS != nil && len(v.SS) == 0, v.NS != nil && len(v.NS) == 0, v.BS != nil && len(v.BS) == 0:
			delete(a, k)
		case v.M != nil:
			dropEmptySets(v.M)
		}
	}
}

// project returns the attributes of a that a projection expression names.
func (x exprs) project(p string, a attrs) (attrs, error) {
	if p == "" {
		return a, nil
	}
	if pr := x.proj.of(x, p); pr != nil {
		return pr.apply(a)
	}
	// Not parsed (a write's, or one the parse refused: minidyn's own
	// words for it).
	out, err := (&interpreter.Language{}).Project(interpreter.ProjectInput{Expression: p, Item: a, Aliases: x.names})
	if err != nil {
		return nil, validation("Invalid ProjectionExpression: %v", err)
	}
	return out, nil
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
