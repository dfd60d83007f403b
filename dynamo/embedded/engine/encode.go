package engine

import (
	"encoding/base64"
	"slices"
	"strconv"
	"unicode/utf8"

	mt "github.com/truora/minidyn/types"
)

// Items and values are encoded as DynamoDB's JSON by hand, as they are
// decoded (decode.go): an item's JSON is written once when it is stored,
// and every projected item is encoded again.

// encodeItem returns an item as DynamoDB's JSON, its attributes in name
// order.
func encodeItem(a attrs) []byte {
	return appendAttrs(make([]byte, 0, 256), a)
}

func appendAttrs(b []byte, a attrs) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(mapKeys(a)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendValue(b, a[k])
	}
	return append(b, '}')
}

func mapKeys(a attrs) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range a {
			if !yield(k) {
				return
			}
		}
	}
}

// appendValue appends one attribute value as DynamoDB's JSON.
func appendValue(b []byte, v *mt.Item) []byte {
	strs := func(tag string, ss []*string) []byte {
		b = append(b, `{"`+tag+`":[`...)
		for i, s := range ss {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, *s)
		}
		return append(b, "]}"...)
	}
	switch {
	case v.S != nil:
		b = append(b, `{"S":`...)
		return append(appendString(b, *v.S), '}')
	case v.N != nil:
		b = append(b, `{"N":`...)
		return append(appendString(b, *v.N), '}')
	case v.B != nil:
		b = append(b, `{"B":"`...)
		return append(base64.StdEncoding.AppendEncode(b, v.B), `"}`...)
	case v.BOOL != nil:
		return append(b, `{"BOOL":`+strconv.FormatBool(*v.BOOL)+`}`...)
	case v.NULL != nil:
		return append(b, `{"NULL":true}`...)
	case v.SS != nil:
		return strs("SS", v.SS)
	case v.NS != nil:
		return strs("NS", v.NS)
	case v.BS != nil:
		b = append(b, `{"BS":[`...)
		for i, e := range v.BS {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(base64.StdEncoding.AppendEncode(b, e), '"')
		}
		return append(b, "]}"...)
	case v.L != nil:
		b = append(b, `{"L":[`...)
		for i, e := range v.L {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, "]}"...)
	case v.M != nil:
		b = append(b, `{"M":`...)
		return append(appendAttrs(b, v.M), '}')
	}
	return append(b, `{"NULL":true}`...)
}

// appendString appends s as a JSON string (invalid UTF-8 as U+FFFD, as
// encoding/json does).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += n
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
