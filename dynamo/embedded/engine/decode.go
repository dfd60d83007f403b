package engine

import (
	"encoding/base64"
	"encoding/json"
	"errors"

	mt "github.com/truora/minidyn/types"
)

// item is decoded from DynamoDB's JSON by hand rather than by
// encoding/json's reflection: every write and every evaluated item goes
// through it, and a start from a data file decodes every item once.

// decodeAttrs decodes a JSON object of attribute values.
func decodeAttrs(b []byte) (attrs, error) {
	d := decoder{b: b}
	a, err := d.attrs()
	if err == nil {
		d.space()
		if d.i != len(d.b) {
			err = errSyntax
		}
	}
	return a, err
}

var errSyntax = errors.New("the attribute values are not valid JSON of DynamoDB's types")

type decoder struct {
	b []byte
	i int
}

func (d *decoder) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\n' || d.b[d.i] == '\t' || d.b[d.i] == '\r') {
		d.i++
	}
}

func (d *decoder) next(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// attrs reads {"name": value, …}; null is an empty map.
func (d *decoder) attrs() (attrs, error) {
	if d.null() {
		return nil, nil
	}
	if !d.next('{') {
		return nil, errSyntax
	}
	a := attrs{}
	if d.next('}') {
		return a, nil
	}
	for {
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		if !d.next(':') {
			return nil, errSyntax
		}
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		a[k] = v
		if d.next('}') {
			return a, nil
		}
		if !d.next(',') {
			return nil, errSyntax
		}
	}
}

func (d *decoder) null() bool {
	d.space()
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// value reads one attribute value, {"S": "…"} and the like.
func (d *decoder) value() (*mt.Item, error) {
	if !d.next('{') {
		return nil, errSyntax
	}
	v := &mt.Item{}
	if d.next('}') {
		return v, nil // no type: checkValue refuses it
	}
	for {
		tag, err := d.str()
		if err != nil || !d.next(':') {
			return nil, errSyntax
		}
		if d.null() {
			tag = ""
		}
		if err := d.typed(tag, v); err != nil {
			return nil, err
		}
		if d.next('}') {
			return v, nil
		}
		if !d.next(',') {
			return nil, errSyntax
		}
	}
}

// typed reads the value of type tag into v ("": a null, nothing).
func (d *decoder) typed(tag string, v *mt.Item) error {
	var err error
	switch tag {
	case "":
	case "S", "N":
		s, err := d.str()
		if err != nil {
			return err
		}
		if tag == "S" {
			v.S = &s
		} else {
			v.N = &s
		}
	case "B":
		v.B, err = d.bytes()
	case "BOOL", "NULL":
		b, err := d.boolean()
		if err != nil {
			return err
		}
		if tag == "BOOL" {
			v.BOOL = &b
		} else {
			v.NULL = &b
		}
	case "SS", "NS", "BS", "L":
		return d.members(tag, v)
	case "M":
		if v.M, err = d.attrs(); err != nil {
			return err
		}
		if v.M == nil {
			v.M = attrs{}
		}
	default:
		return errSyntax
	}
	return err
}

// boolean reads true or false.
func (d *decoder) boolean() (bool, error) {
	d.space()
	switch {
	case len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "true":
		d.i += 4
		return true, nil
	case len(d.b)-d.i >= 5 && string(d.b[d.i:d.i+5]) == "false":
		d.i += 5
		return false, nil
	}
	return false, errSyntax
}

// members reads the array of a set or a list (tag SS, NS, BS or L) into
// v: an empty one too, never nil.
func (d *decoder) members(tag string, v *mt.Item) error {
	if !d.next('[') {
		return errSyntax
	}
	empty := d.next(']')
	switch tag {
	case "SS":
		v.SS = []*string{}
	case "NS":
		v.NS = []*string{}
	case "BS":
		v.BS = [][]byte{}
	default:
		v.L = []*mt.Item{}
	}
	for !empty {
		switch tag {
		case "SS", "NS":
			s, err := d.str()
			if err != nil {
				return err
			}
			if tag == "SS" {
				v.SS = append(v.SS, &s)
			} else {
				v.NS = append(v.NS, &s)
			}
		case "BS":
			b, err := d.bytes()
			if err != nil {
				return err
			}
			v.BS = append(v.BS, b)
		default:
			e, err := d.value()
			if err != nil {
				return err
			}
			v.L = append(v.L, e)
		}
		if d.next(']') {
			return nil
		}
		if !d.next(',') {
			return errSyntax
		}
	}
	return nil
}

func (d *decoder) bytes() ([]byte, error) {
	s, err := d.str()
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errSyntax
	}
	return b, nil
}

// str reads a JSON string.
func (d *decoder) str() (string, error) {
	if !d.next('"') {
		return "", errSyntax
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := string(d.b[start:d.i])
			d.i++
			return s, nil
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", errSyntax
		}
		d.i++
	}
	return "", errSyntax
}

// escaped reads a string with escapes, from its start, by encoding/json.
func (d *decoder) escaped(start int) (string, error) {
	end := d.i
	for end < len(d.b) {
		if d.b[end] == '\\' {
			end += 2
			continue
		}
		if d.b[end] == '"' {
			break
		}
		end++
	}
	if end >= len(d.b) {
		return "", errSyntax
	}
	var s string
	if err := json.Unmarshal(d.b[start-1:end+1], &s); err != nil {
		return "", errSyntax
	}
	d.i = end + 1
	return s, nil
}

// attrs decode themselves by hand inside the requests encoding/json reads.
func (a *attrMap) UnmarshalJSON(b []byte) error {
	m, err := decodeAttrs(b)
	if err != nil {
		return err
	}
	*a = attrMap(m)
	return nil
}

// attrMap is attrs in a request: decoded by decodeAttrs.
type attrMap attrs
