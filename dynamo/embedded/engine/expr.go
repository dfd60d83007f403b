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

// keyCond is a Query's key condition on one index: the hash key's value
// and a condition on the range key (op "" for none).
type keyCond struct {
	hash string
	op   string // "", "=", "<", "<=", ">", ">=", "BETWEEN", "begins_with"
	a, b string
}

// parseKeyCondition reads a key condition expression for key schema s.
func (x exprs) parseKeyCondition(text string, s schema) (keyCond, error) {
	var kc keyCond
	c, err := parseCondition("KeyConditionExpression", text)
	if err != nil {
		return kc, err
	}
	if c == nil {
		return kc, validation("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.")
	}
	var parts []language.Expression
	var flatten func(e language.Expression) error
	flatten = func(e language.Expression) error {
		if in, ok := e.(*language.InfixExpression); ok && strings.EqualFold(in.Operator, "AND") {
			if err := flatten(in.Left); err != nil {
				return err
			}
			return flatten(in.Right)
		}
		if in, ok := e.(*language.InfixExpression); ok && (strings.EqualFold(in.Operator, "OR") || in.Operator == "<>") {
			return validation("Invalid operator used in KeyConditionExpression: %s", strings.ToUpper(in.Operator))
		}
		if _, ok := e.(*language.PrefixExpression); ok {
			return validation("Invalid operator used in KeyConditionExpression: NOT")
		}
		parts = append(parts, e)
		return nil
	}
	if err := flatten(c.Expression); err != nil {
		return kc, err
	}
	if len(parts) > 2 {
		return kc, validation("Conditions can be of length 1 or 2 only")
	}
	attr := func(e language.Expression) (string, error) {
		id, ok := e.(*language.Identifier)
		if !ok || strings.HasPrefix(id.Value, ":") {
			return "", validation("Invalid KeyConditionExpression: the key condition's left operand must be a key attribute")
		}
		if n, ok := x.names[id.Value]; ok {
			return n, nil
		}
		return id.Value, nil
	}
	value := func(e language.Expression, k keyAttr) (string, error) {
		id, ok := e.(*language.Identifier)
		if !ok || !strings.HasPrefix(id.Value, ":") {
			return "", validation("Invalid KeyConditionExpression: a key condition compares a key attribute with a value")
		}
		v := x.values[id.Value]
		if v == nil || (k.typ == "S" && v.S == nil) || (k.typ == "B" && v.B == nil) {
			return "", validation("One or more parameter values were invalid: Condition parameter type does not match schema type")
		}
		if k.typ == "S" {
			return *v.S, nil
		}
		return string(v.B), nil
	}
	hashSeen := false
	for _, p := range parts {
		var name, op string
		var args []language.Expression
		switch e := p.(type) {
		case *language.InfixExpression:
			switch e.Operator {
			case "=", "<", "<=", ">", ">=":
			default:
				return kc, validation("Invalid operator used in KeyConditionExpression: %s", e.Operator)
			}
			if name, err = attr(e.Left); err != nil {
				return kc, err
			}
			op, args = e.Operator, []language.Expression{e.Right}
		case *language.BetweenExpression:
			if name, err = attr(e.Left); err != nil {
				return kc, err
			}
			op, args = "BETWEEN", e.Range[:]
		case *language.CallExpression:
			fn, _ := e.Function.(*language.Identifier)
			if fn == nil || fn.Value != "begins_with" || len(e.Arguments) != 2 {
				return kc, validation("Invalid operator used in KeyConditionExpression: %s", e.Function)
			}
			if name, err = attr(e.Arguments[0]); err != nil {
				return kc, err
			}
			op, args = "begins_with", e.Arguments[1:]
		default:
			return kc, validation("Invalid KeyConditionExpression: %s", p)
		}
		switch {
		case name == s.hash.name && !hashSeen:
			if op != "=" {
				return kc, validation("Query key condition not supported")
			}
			if kc.hash, err = value(args[0], s.hash); err != nil {
				return kc, err
			}
			hashSeen = true
		case name == s.rng.name && s.rng.name != "" && kc.op == "":
			kc.op = op
			if kc.a, err = value(args[0], s.rng); err != nil {
				return kc, err
			}
			if len(args) > 1 {
				if kc.b, err = value(args[1], s.rng); err != nil {
					return kc, err
				}
				if kc.a > kc.b {
					return kc, validation("Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound")
				}
			}
		default:
			return kc, validation("Query key condition not supported")
		}
	}
	if !hashSeen {
		return kc, validation("Query condition missed key schema element: %s", s.hash.name)
	}
	return kc, nil
}

// cmp places a range key against the condition: -1 before the keys it
// admits, 0 among them, 1 after them.
func (kc keyCond) cmp(rng string) int {
	switch kc.op {
	case "=":
		return strings.Compare(rng, kc.a)
	case "<":
		if rng < kc.a {
			return 0
		}
		return 1
	case "<=":
		if rng <= kc.a {
			return 0
		}
		return 1
	case ">":
		if rng > kc.a {
			return 0
		}
		return -1
	case ">=":
		if rng >= kc.a {
			return 0
		}
		return -1
	case "BETWEEN":
		switch {
		case rng < kc.a:
			return -1
		case rng > kc.b:
			return 1
		}
		return 0
	case "begins_with":
		switch {
		case strings.HasPrefix(rng, kc.a):
			return 0
		case rng < kc.a:
			return -1
		}
		return 1
	}
	return 0
}

// end is the range key at which the condition's keys end inclusively in
// the direction of reading (forward: ascending), or nil: the bound of
// <= and BETWEEN forward, of >= and BETWEEN backward.
func (kc keyCond) end(forward bool) *string {
	switch {
	case forward && kc.op == "<=":
		return &kc.a
	case forward && kc.op == "BETWEEN":
		return &kc.b
	case !forward && (kc.op == ">=" || kc.op == "BETWEEN"):
		return &kc.a
	}
	return nil
}

// low is a range key at or before every key the condition admits.
func (kc keyCond) low() string {
	switch kc.op {
	case "=", ">", ">=", "BETWEEN", "begins_with":
		return kc.a
	}
	return ""
}

// high returns a range key after every key the condition admits in the
// hash key's partition, or ok false when there is none (read from the
// partition's end).
func (kc keyCond) high() (string, bool) {
	switch kc.op {
	case "=", "<", "<=":
		return kc.a + "\x00", true
	case "BETWEEN":
		return kc.b + "\x00", true
	case "begins_with":
		p := []byte(kc.a)
		for len(p) > 0 && p[len(p)-1] == 0xff {
			p = p[:len(p)-1]
		}
		if len(p) == 0 {
			return "", false
		}
		p[len(p)-1]++
		return string(p), true
	}
	return "", false
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
