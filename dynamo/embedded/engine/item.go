package engine

import (
	"math/big"

	mt "github.com/truora/minidyn/types"
)

// attrs is an item, a key or a set of expression values as DynamoDB's JSON
// decodes into minidyn's attribute type, the type its interpreter
// evaluates (the field names of mt.Item are DynamoDB's type tags).
type attrs = map[string]*mt.Item

// item is a stored item: its JSON, written once when it is stored and
// copied into every answer as it is, and its keys in the table and in
// each index of the table (ok false: the item is not in that index).
type item struct {
	raw  []byte
	size int
	key  ikey
	ix   []ikey
}

// ikey is an item's key in the table or one index.
type ikey struct {
	hash, rng string
	ok        bool
}

// decode returns the attributes of a stored item.
func (it *item) decode() (attrs, error) {
	return decodeAttrs(it.raw)
}

// checkValue checks that an attribute value is one of DynamoDB's types,
// well formed, as DynamoDB checks what it is sent.
func checkValue(v *mt.Item) error {
	if v == nil {
		return validation("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes")
	}
	n := 0
	for _, set := range []bool{v.S != nil, v.N != nil, v.B != nil, v.BOOL != nil, v.NULL != nil,
		v.SS != nil, v.NS != nil, v.BS != nil, v.L != nil, v.M != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
	}
	switch {
	case v.NULL != nil && !*v.NULL:
		return validation("One or more parameter values were invalid: Null attribute value types must have the value of true")
	case v.N != nil:
		return checkNumber(*v.N)
	case v.SS != nil && len(v.SS) == 0, v.NS != nil && len(v.NS) == 0, v.BS != nil && len(v.BS) == 0:
		return validation("One or more parameter values were invalid: An number set  may not be empty")
	case v.NS != nil:
		for _, n := range v.NS {
			if n == nil {
				return validation("One or more parameter values were invalid: a number set holds a null")
			}
			if err := checkNumber(*n); err != nil {
				return err
			}
		}
	case v.L != nil:
		for _, e := range v.L {
			if err := checkValue(e); err != nil {
				return err
			}
		}
	case v.M != nil:
		for _, e := range v.M {
			if err := checkValue(e); err != nil {
				return err
			}
		}
	}
	if err := mt.ValidateItemAttributeValue(v); err != nil {
		return validation("%s", err.Error())
	}
	return nil
}

// checkNumber checks a number as DynamoDB does: a decimal of at most 38
// significant digits, between 1e-130 and 1e126 in magnitude.
func checkNumber(s string) error {
	f, ok := new(big.Float).SetPrec(256).SetString(s)
	if !ok || s == "" {
		return validation("A value provided cannot be converted into a number")
	}
	if f.Sign() == 0 {
		return nil
	}
	exp := f.MantExp(nil) // |f| in [2^(exp-1), 2^exp)
	if float64(exp) > 126*3.3219281 || float64(exp) < -130*3.3219281 {
		return validation("Number overflow. Attempting to store a number with magnitude larger than supported range")
	}
	digits := 0
	lead := true
	trail := 0
	for _, c := range s {
		if c == 'e' || c == 'E' {
			break
		}
		if c < '0' || c > '9' {
			continue
		}
		if lead && c == '0' {
			continue
		}
		lead = false
		digits++
		if c == '0' {
			trail++
		} else {
			trail = 0
		}
	}
	if digits-trail > 38 {
		return validation("Attempting to store more than 38 significant digits in a Number")
	}
	return nil
}

// valueSize is DynamoDB's size of an attribute value in bytes
// (the developer guide's "Item sizes and formats").
func valueSize(v *mt.Item) int {
	switch {
	case v.S != nil:
		return len(*v.S)
	case v.N != nil:
		return numberSize(*v.N)
	case v.B != nil:
		return len(v.B)
	case v.BOOL != nil, v.NULL != nil:
		return 1
	case v.SS != nil:
		n := 0
		for _, s := range v.SS {
			n += len(*s)
		}
		return n
	case v.NS != nil:
		n := 0
		for _, s := range v.NS {
			n += numberSize(*s)
		}
		return n
	case v.BS != nil:
		n := 0
		for _, b := range v.BS {
			n += len(b)
		}
		return n
	case v.L != nil:
		n := 3
		for _, e := range v.L {
			n += 1 + valueSize(e)
		}
		return n
	case v.M != nil:
		n := 3
		for k, e := range v.M {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize is about one byte per two significant digits, plus one.
func numberSize(s string) int {
	digits := 0
	for _, c := range s {
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	return (digits+1)/2 + 1
}

// itemSize is DynamoDB's size of an item: its attribute names and values.
func itemSize(a attrs) int {
	n := 0
	for k, v := range a {
		n += len(k) + valueSize(v)
	}
	return n
}

// keyString returns a key attribute's value as the string a B-tree orders
// (bytes for B), or a ValidationException naming what is wrong.
func keyString(k keyAttr, v *mt.Item, where string) (string, error) {
	var s string
	switch {
	case k.typ == "S" && v.S != nil:
		s = *v.S
	case k.typ == "B" && v.B != nil:
		s = string(v.B)
	default:
		return "", validation("One or more parameter values were invalid: Type mismatch for %s key %s expected: %s actual: %s", where, k.name, k.typ, typeOf(v))
	}
	if s == "" {
		return "", validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s", map[string]string{"S": "string", "B": "binary"}[k.typ], k.name)
	}
	return s, nil
}

// typeOf is the type tag of a value.
func typeOf(v *mt.Item) string {
	switch {
	case v.S != nil:
		return "S"
	case v.N != nil:
		return "N"
	case v.B != nil:
		return "B"
	case v.BOOL != nil:
		return "BOOL"
	case v.NULL != nil:
		return "NULL"
	case v.SS != nil:
		return "SS"
	case v.NS != nil:
		return "NS"
	case v.BS != nil:
		return "BS"
	case v.L != nil:
		return "L"
	case v.M != nil:
		return "M"
	}
	return ""
}

// keyOf returns the key of an item (or of a key: every attribute of it
// must be a key attribute) in schema s.
func keyOf(s schema, a attrs, exact bool) (ikey, error) {
	k := ikey{ok: true}
	hv, ok := a[s.hash.name]
	if !ok {
		return k, validation("One or more parameter values were invalid: Missing the key %s in the item", s.hash.name)
	}
	var err error
	if k.hash, err = keyString(s.hash, hv, "table"); err != nil {
		return k, err
	}
	n := 1
	if s.rng.name != "" {
		rv, ok := a[s.rng.name]
		if !ok {
			return k, validation("One or more parameter values were invalid: Missing the key %s in the item", s.rng.name)
		}
		if k.rng, err = keyString(s.rng, rv, "table"); err != nil {
			return k, err
		}
		n++
	}
	if exact && len(a) != n {
		return k, validation("The provided key element does not match the schema")
	}
	if len(k.hash) > maxHashKey || len(k.rng) > maxRangeKey {
		return k, errKeyTooLong()
	}
	return k, nil
}

// newItem checks an item as the table stores it and makes it: every value
// well formed, its key, its keys in the indexes where it has them (of the
// index's types, not empty), at most 400 KB.
func (t *table) newItem(a attrs) (*item, error) {
	for _, v := range a {
		if err := checkValue(v); err != nil {
			return nil, err
		}
	}
	key, err := keyOf(t.key, a, false)
	if err != nil {
		return nil, err
	}
	it := &item{key: key, ix: make([]ikey, len(t.indexes))}
	for i, ix := range t.indexes {
		hv, hok := a[ix.key.hash.name]
		rv, rok := a[ix.key.rng.name]
		var k ikey
		if hok {
			if k.hash, err = keyString(ix.key.hash, hv, "Index"); err != nil {
				return nil, indexKeyError(err, ix)
			}
		}
		if rok && ix.key.rng.name != "" {
			if k.rng, err = keyString(ix.key.rng, rv, "Index"); err != nil {
				return nil, indexKeyError(err, ix)
			}
		}
		k.ok = hok && (rok || ix.key.rng.name == "")
		it.ix[i] = k
	}
	if it.size = itemSize(a); it.size > maxItemSize {
		return nil, validation(errTooLarge)
	}
	it.raw = encodeItem(a)
	return it, nil
}

func indexKeyError(err error, ix *index) error {
	e := err.(*Error)
	e.Message += " IndexName: " + ix.name
	return e
}
