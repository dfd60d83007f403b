package engine

import (
	"bytes"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/truora/minidyn/interpreter/language"
	mt "github.com/truora/minidyn/types"
)

// A condition or filter is parsed by minidyn's parser and evaluated here,
// on the item's attributes as they are, by DynamoDB's rules: a comparison
// of values of different types, or with an attribute the item lacks, is
// false (not an error), and <> its negation; numbers compare exactly.

// eval tells whether item a satisfies the condition expression e.
func (x exprs) eval(e language.Expression, a attrs) (bool, error) {
	switch n := e.(type) {
	case *language.InfixExpression:
		switch strings.ToUpper(n.Operator) {
		case "AND", "OR":
			l, err := x.eval(n.Left, a)
			if err != nil {
				return false, err
			}
			if l == (strings.ToUpper(n.Operator) == "OR") {
				return l, nil
			}
			return x.eval(n.Right, a)
		case "=", "<>", "<", "<=", ">", ">=":
			l, err := x.operand(n.Left, a)
			if err != nil {
				return false, err
			}
			r, err := x.operand(n.Right, a)
			if err != nil {
				return false, err
			}
			if n.Operator == "=" {
				return equal(l, r), nil
			}
			if n.Operator == "<>" {
				return !equal(l, r), nil
			}
			c, ok := compare(l, r)
			if !ok {
				return false, nil
			}
			switch n.Operator {
			case "<":
				return c < 0, nil
			case "<=":
				return c <= 0, nil
			case ">":
				return c > 0, nil
			}
			return c >= 0, nil
		}
	case *language.PrefixExpression:
		if strings.EqualFold(n.Operator, "NOT") {
			v, err := x.eval(n.Right, a)
			return !v, err
		}
	case *language.BetweenExpression:
		v, err := x.operand(n.Left, a)
		if err != nil {
			return false, err
		}
		lo, err := x.operand(n.Range[0], a)
		if err != nil {
			return false, err
		}
		hi, err := x.operand(n.Range[1], a)
		if err != nil {
			return false, err
		}
		if c, ok := compare(lo, hi); ok && c > 0 {
			return false, validation("Invalid ConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound")
		}
		c1, ok1 := compare(lo, v)
		c2, ok2 := compare(v, hi)
		return ok1 && ok2 && c1 <= 0 && c2 <= 0, nil
	case *language.InExpression:
		v, err := x.operand(n.Left, a)
		if err != nil {
			return false, err
		}
		for _, r := range n.Range {
			o, err := x.operand(r, a)
			if err != nil {
				return false, err
			}
			if equal(v, o) {
				return true, nil
			}
		}
		return false, nil
	case *language.CallExpression:
		return x.call(n, a)
	}
	return false, validation("Invalid ConditionExpression: Syntax error; %s", e)
}

// call evaluates a function of a condition.
func (x exprs) call(n *language.CallExpression, a attrs) (bool, error) {
	fn, _ := n.Function.(*language.Identifier)
	name := ""
	if fn != nil {
		name = fn.Value
	}
	want := map[string]int{"attribute_exists": 1, "attribute_not_exists": 1, "attribute_type": 2, "begins_with": 2, "contains": 2}[name]
	if want == 0 || len(n.Arguments) != want {
		return false, validation("Invalid ConditionExpression: Invalid function name or arguments; function: %s", name)
	}
	v, err := x.operand(n.Arguments[0], a)
	if err != nil {
		return false, err
	}
	var arg *mt.Item
	if want == 2 {
		if arg, err = x.operand(n.Arguments[1], a); err != nil {
			return false, err
		}
	}
	switch name {
	case "attribute_exists":
		return v != nil, nil
	case "attribute_not_exists":
		return v == nil, nil
	case "attribute_type":
		if arg == nil || arg.S == nil {
			return false, validation("Invalid ConditionExpression: attribute_type takes a type name")
		}
		return v != nil && typeOf(v) == *arg.S, nil
	case "begins_with":
		switch {
		case v == nil || arg == nil:
			return false, nil
		case v.S != nil && arg.S != nil:
			return strings.HasPrefix(*v.S, *arg.S), nil
		case v.B != nil && arg.B != nil:
			return bytes.HasPrefix(v.B, arg.B), nil
		}
		return false, nil
	}
	// contains: a substring of a string, an element of a set or a list.
	switch {
	case v == nil || arg == nil:
		return false, nil
	case v.S != nil && arg.S != nil:
		return strings.Contains(*v.S, *arg.S), nil
	case v.B != nil && arg.B != nil:
		return bytes.Contains(v.B, arg.B), nil
	case v.SS != nil && arg.S != nil:
		for _, e := range v.SS {
			if *e == *arg.S {
				return true, nil
			}
		}
	case v.NS != nil && arg.N != nil:
		for _, e := range v.NS {
			if equal(&mt.Item{N: e}, arg) {
				return true, nil
			}
		}
	case v.BS != nil && arg.B != nil:
		for _, e := range v.BS {
			if bytes.Equal(e, arg.B) {
				return true, nil
			}
		}
	case v.L != nil:
		for _, e := range v.L {
			if equal(e, arg) {
				return true, nil
			}
		}
	}
	return false, nil
}

// operand is the value of an operand: an expression attribute value, an
// attribute of the item by its path (nil when the item has none), or
// size(path).
func (x exprs) operand(e language.Expression, a attrs) (*mt.Item, error) {
	switch n := e.(type) {
	case *language.Identifier:
		if strings.HasPrefix(n.Value, ":") {
			return x.values[n.Value], nil
		}
		return a[x.name(n.Value)], nil
	case *language.IndexExpression:
		base, err := x.operand(n.Left, a)
		if err != nil || base == nil {
			return nil, err
		}
		id, _ := n.Index.(*language.Identifier)
		if id == nil {
			return nil, validation("Invalid expression: a document path")
		}
		if n.Type == language.ObjectTypeMap {
			if base.M == nil {
				return nil, nil
			}
			return base.M[x.name(id.Value)], nil
		}
		i, err := strconv.Atoi(id.Value)
		if err != nil || base.L == nil || i < 0 || i >= len(base.L) {
			return nil, nil
		}
		return base.L[i], nil
	case *language.CallExpression:
		fn, _ := n.Function.(*language.Identifier)
		if fn == nil || fn.Value != "size" || len(n.Arguments) != 1 {
			return nil, validation("Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: %s", n.Function)
		}
		v, err := x.operand(n.Arguments[0], a)
		if err != nil || v == nil {
			return nil, err
		}
		size := -1
		switch {
		case v.S != nil:
			size = utf8.RuneCountInString(*v.S)
		case v.B != nil:
			size = len(v.B)
		case v.SS != nil:
			size = len(v.SS)
		case v.NS != nil:
			size = len(v.NS)
		case v.BS != nil:
			size = len(v.BS)
		case v.L != nil:
			size = len(v.L)
		case v.M != nil:
			size = len(v.M)
		}
		if size < 0 {
			return nil, validation("Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: size, operand type: %s", typeOf(v))
		}
		s := strconv.Itoa(size)
		return &mt.Item{N: &s}, nil
	}
	return nil, validation("Invalid ConditionExpression: Syntax error; %s", e)
}

// name resolves an expression attribute name.
func (x exprs) name(n string) string {
	if v, ok := x.names[n]; ok {
		return v
	}
	return n
}

// equal tells whether two values are the same type and value (sets as
// sets).
func equal(a, b *mt.Item) bool {
	if a == nil || b == nil {
		return false
	}
	if c, ok := compare(a, b); ok {
		return c == 0
	}
	if typeOf(a) != typeOf(b) {
		return false
	}
	switch {
	case a.NS != nil:
		return sameSet(a.NS, b.NS, func(x, y *string) bool { return equal(&mt.Item{N: x}, &mt.Item{N: y}) })
	case a.SS != nil:
		return sameSet(a.SS, b.SS, func(x, y *string) bool { return *x == *y })
	case a.BS != nil:
		return sameSet(a.BS, b.BS, func(x, y []byte) bool { return bytes.Equal(x, y) })
	}
	return bytes.Equal(appendValue(nil, a), appendValue(nil, b))
}

func sameSet[T any](a, b []T, eq func(x, y T) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if eq(x, y) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// compare orders two scalars of one type (N, S, B); ok is false for any
// other pair.
func compare(a, b *mt.Item) (c int, ok bool) {
	switch {
	case a == nil || b == nil:
		return 0, false
	case a.S != nil && b.S != nil:
		return strings.Compare(*a.S, *b.S), true
	case a.B != nil && b.B != nil:
		return bytes.Compare(a.B, b.B), true
	case a.N != nil && b.N != nil:
		x, okx := new(big.Float).SetPrec(200).SetString(*a.N)
		y, oky := new(big.Float).SetPrec(200).SetString(*b.N)
		if !okx || !oky {
			return 0, false
		}
		return x.Cmp(y), true
	}
	return 0, false
}
