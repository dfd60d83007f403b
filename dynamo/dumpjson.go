package dynamo

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An item line of a dump: the SDK's attribute values to DynamoDB's JSON
// and back, every value checked as DynamoDB checks it.

// encodeItem turns an item into DynamoDB's JSON.
func encodeItem(it Item) map[string]any {
	m := make(map[string]any, len(it))
	for k, v := range it {
		m[k] = encodeValue(v)
	}
	return m
}

func encodeValue(v types.AttributeValue) map[string]any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": v.Value} // base64, as DynamoDB's JSON has it
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberBS:
		return map[string]any{"BS": v.Value}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = encodeValue(e)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": encodeItem(v.Value)}
	}
	panic(fmt.Sprintf("dynamo: unknown attribute value %T", v))
}

// dumpValue is an attribute value as DynamoDB's JSON has it: a line of a
// dump is decoded in one pass into these (a start from a data file
// decodes every item), then checked and turned into the SDK's values.
type dumpValue struct {
	S, N       *string
	B          []byte
	BOOL, NULL *bool
	SS, NS     []string
	BS         [][]byte
	L          []dumpValue
	M          map[string]dumpValue
}

func decodeItem(raw map[string]dumpValue) (Item, error) {
	it := make(Item, len(raw))
	for k, r := range raw {
		v, err := r.value()
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %v", k, err)
		}
		it[k] = v
	}
	return it, nil
}

func (d dumpValue) value() (types.AttributeValue, error) {
	var v types.AttributeValue
	n := 0
	set := func(x types.AttributeValue) { v = x; n++ }
	if d.S != nil {
		set(&types.AttributeValueMemberS{Value: *d.S})
	}
	if d.N != nil {
		set(&types.AttributeValueMemberN{Value: *d.N})
	}
	if d.B != nil {
		set(&types.AttributeValueMemberB{Value: d.B})
	}
	if d.BOOL != nil {
		set(&types.AttributeValueMemberBOOL{Value: *d.BOOL})
	}
	if d.NULL != nil {
		set(&types.AttributeValueMemberNULL{Value: true})
	}
	if d.SS != nil {
		set(&types.AttributeValueMemberSS{Value: d.SS})
	}
	if d.NS != nil {
		set(&types.AttributeValueMemberNS{Value: d.NS})
	}
	if d.BS != nil {
		set(&types.AttributeValueMemberBS{Value: d.BS})
	}
	if d.L != nil {
		l := make([]types.AttributeValue, len(d.L))
		for i, x := range d.L {
			var err error
			if l[i], err = x.value(); err != nil {
				return nil, err
			}
		}
		set(&types.AttributeValueMemberL{Value: l})
	}
	if d.M != nil {
		m, err := decodeItem(d.M)
		if err != nil {
			return nil, err
		}
		set(&types.AttributeValueMemberM{Value: m})
	}
	if n != 1 {
		return nil, errors.New(`not a typed value such as {"S":"…"}`)
	}
	return v, nil
}

// decodeRaw decodes an item attribute by attribute, to say what is wrong
// with one that decodeItem refused.
func decodeRaw(raw map[string]json.RawMessage) (Item, error) {
	it := make(Item, len(raw))
	for k, r := range raw {
		v, err := decodeValue(r)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %v", k, err)
		}
		it[k] = v
	}
	return it, nil
}

func decodeValue(raw json.RawMessage) (types.AttributeValue, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return nil, errors.New(`not a typed value such as {"S":"…"}`)
	}
	for typ, r := range m {
		v, err := decodeTyped(typ, r)
		if err != nil {
			return nil, fmt.Errorf("bad %s value: %v", typ, err)
		}
		return v, nil
	}
	panic("unreachable")
}

func decodeTyped(typ string, r json.RawMessage) (types.AttributeValue, error) {
	switch typ {
	case "S":
		x, err := unmarshal[string](r)
		return &types.AttributeValueMemberS{Value: x}, err
	case "N":
		x, err := unmarshal[string](r)
		return &types.AttributeValueMemberN{Value: x}, err
	case "B":
		x, err := unmarshal[[]byte](r)
		return &types.AttributeValueMemberB{Value: x}, err
	case "BOOL":
		x, err := unmarshal[bool](r)
		return &types.AttributeValueMemberBOOL{Value: x}, err
	case "NULL":
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case "SS":
		x, err := unmarshal[[]string](r)
		return &types.AttributeValueMemberSS{Value: x}, err
	case "NS":
		x, err := unmarshal[[]string](r)
		return &types.AttributeValueMemberNS{Value: x}, err
	case "BS":
		x, err := unmarshal[[][]byte](r)
		return &types.AttributeValueMemberBS{Value: x}, err
	case "L":
		xs, err := unmarshal[[]json.RawMessage](r)
		if err != nil {
			return nil, err
		}
		l := make([]types.AttributeValue, len(xs))
		for i, x := range xs {
			if l[i], err = decodeValue(x); err != nil {
				return nil, err
			}
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case "M":
		xs, err := unmarshal[map[string]json.RawMessage](r)
		if err != nil {
			return nil, err
		}
		m, err := decodeRaw(xs)
		return &types.AttributeValueMemberM{Value: m}, err
	}
	return nil, fmt.Errorf("unknown type")
}

func unmarshal[T any](r json.RawMessage) (T, error) {
	var x T
	err := json.Unmarshal(r, &x)
	return x, err
}
