package engine

import (
	"strings"

	"github.com/truora/minidyn/interpreter/language"
)

// A Query's key condition: parsed into the hash key's value and a range
// of the range key, which the Query reads as a range of its tree.

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
	parts, err := keyTerms(c.Expression, nil)
	if err != nil {
		return kc, err
	}
	if len(parts) > 2 {
		return kc, validation("Conditions can be of length 1 or 2 only")
	}
	hashSeen := false
	for _, p := range parts {
		name, op, args, err := x.keyTerm(p)
		if err != nil {
			return kc, err
		}
		switch {
		case name == s.hash.name && !hashSeen:
			if op != "=" {
				return kc, validation("Query key condition not supported")
			}
			if kc.hash, err = x.keyValue(args[0], s.hash); err != nil {
				return kc, err
			}
			hashSeen = true
		case name == s.rng.name && s.rng.name != "" && kc.op == "":
			kc.op = op
			if kc.a, err = x.keyValue(args[0], s.rng); err != nil {
				return kc, err
			}
			if len(args) > 1 {
				if kc.b, err = x.keyValue(args[1], s.rng); err != nil {
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

// keyTerms appends the terms of a key condition's ANDs to parts, left to
// right; OR, <> and NOT are no operators of a key condition.
func keyTerms(e language.Expression, parts []language.Expression) ([]language.Expression, error) {
	if in, ok := e.(*language.InfixExpression); ok && strings.EqualFold(in.Operator, "AND") {
		parts, err := keyTerms(in.Left, parts)
		if err != nil {
			return nil, err
		}
		return keyTerms(in.Right, parts)
	}
	if in, ok := e.(*language.InfixExpression); ok && (strings.EqualFold(in.Operator, "OR") || in.Operator == "<>") {
		return nil, validation("Invalid operator used in KeyConditionExpression: %s", strings.ToUpper(in.Operator))
	}
	if _, ok := e.(*language.PrefixExpression); ok {
		return nil, validation("Invalid operator used in KeyConditionExpression: NOT")
	}
	return append(parts, e), nil
}

// keyTerm reads one term of a key condition: the key attribute it names,
// its operator (=, <, <=, >, >=, BETWEEN, begins_with) and the operands
// it compares the attribute with.
func (x exprs) keyTerm(p language.Expression) (name, op string, args []language.Expression, err error) {
	switch e := p.(type) {
	case *language.InfixExpression:
		switch e.Operator {
		case "=", "<", "<=", ">", ">=":
		default:
			return "", "", nil, validation("Invalid operator used in KeyConditionExpression: %s", e.Operator)
		}
		if name, err = x.keyAttr(e.Left); err != nil {
			return "", "", nil, err
		}
		return name, e.Operator, []language.Expression{e.Right}, nil
	case *language.BetweenExpression:
		if name, err = x.keyAttr(e.Left); err != nil {
			return "", "", nil, err
		}
		return name, "BETWEEN", e.Range[:], nil
	case *language.CallExpression:
		fn, _ := e.Function.(*language.Identifier)
		if fn == nil || fn.Value != "begins_with" || len(e.Arguments) != 2 {
			return "", "", nil, validation("Invalid operator used in KeyConditionExpression: %s", e.Function)
		}
		if name, err = x.keyAttr(e.Arguments[0]); err != nil {
			return "", "", nil, err
		}
		return name, "begins_with", e.Arguments[1:], nil
	}
	return "", "", nil, validation("Invalid KeyConditionExpression: %s", p)
}

// keyAttr is the key attribute a key condition's left operand names.
func (x exprs) keyAttr(e language.Expression) (string, error) {
	id, ok := e.(*language.Identifier)
	if !ok || strings.HasPrefix(id.Value, ":") {
		return "", validation("Invalid KeyConditionExpression: the key condition's left operand must be a key attribute")
	}
	if n, ok := x.names[id.Value]; ok {
		return n, nil
	}
	return id.Value, nil
}

// keyValue is the value, of key attribute k's type, that a key condition
// compares k with.
func (x exprs) keyValue(e language.Expression, k keyAttr) (string, error) {
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
