package client

import (
	"math"
	"math/big"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB's bill, computed from a call and the items it read: what tests
// pin per screen, by the rules DynamoDB bills with (which the embedded
// store reports its consumed capacity by, dynamo/embedded/engine) (checked against
// dynalite's reports in graph's TestItemSizeRulesAgainstDynalite and
// TestCapacityRulesMatchDynalite).

// ItemSize is an item's size by DynamoDB's rules: each attribute's name
// (UTF-8 bytes) plus its value: strings and binaries their bytes, numbers
// about one byte per two significant digits plus one, booleans and nulls
// one, lists and maps three plus one per element plus their elements (and,
// in maps, the elements' names).
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + len(v.Value) + ItemSize(v.Value)
	}
	return 0
}

// numberSize: 1 + ceil(significant digits / 2), one more when the digits
// do not pair up with the decimal point, one more for a negative number.
func numberSize(s string) int {
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() == 0 {
		return 1
	}
	neg := r.Sign() < 0
	digits := strings.TrimLeft(strings.ReplaceAll(strings.TrimPrefix(s, "-"), ".", ""), "0")
	digits = strings.TrimRight(digits, "0")
	intPart := strings.TrimLeft(strings.SplitN(strings.TrimPrefix(s, "-"), ".", 2)[0], "0")
	exp := len(intPart) - 1 // the exponent of the first significant digit
	if intPart == "" {
		frac := strings.SplitN(strings.TrimPrefix(s, "-"), ".", 2)[1]
		exp = -(len(frac) - len(strings.TrimLeft(frac, "0"))) - 1
	}
	d := len(digits)
	n := 1 + (d+1)/2
	if d%2 == 0 && exp%2 == 0 {
		n++
	}
	if neg {
		n++
	}
	return n
}

// Units is size in blocks of per bytes, rounded up, at least one.
func Units(size, per int) float64 { return math.Max(1, math.Ceil(float64(size)/float64(per))) }

// half is an eventually consistent read's factor.
func half(consistent *bool) float64 {
	if aws.ToBool(consistent) {
		return 1
	}
	return 0.5
}

// Bill is the read units of one read call by DynamoDB's rules, from its
// input and output: GetItem its item per 4 KB; BatchGetItem each item per
// 4 KB on its own (a key not found, one block); Query its items summed,
// then per 4 KB (nothing found: one block); half of that eventually
// consistent. Other calls: 0.
func Bill(in, out any) float64 {
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		o, _ := out.(*dynamodb.GetItemOutput)
		if o == nil {
			return 0
		}
		return Units(ItemSize(o.Item), 4096) * half(in.ConsistentRead)
	case *dynamodb.BatchGetItemInput:
		o, _ := out.(*dynamodb.BatchGetItemOutput)
		if o == nil {
			return 0
		}
		read := 0.0
		for t, ka := range in.RequestItems {
			got := o.Responses[t]
			for _, it := range got {
				read += Units(ItemSize(it), 4096) * half(ka.ConsistentRead)
			}
			left := 0
			if u, ok := o.UnprocessedKeys[t]; ok {
				left = len(u.Keys)
			}
			read += float64(len(ka.Keys)-len(got)-left) * half(ka.ConsistentRead) // not found
		}
		return read
	case *dynamodb.QueryInput:
		o, _ := out.(*dynamodb.QueryOutput)
		if o == nil {
			return 0
		}
		n := 0
		for _, it := range o.Items {
			n += ItemSize(it)
		}
		return Units(n, 4096) * half(in.ConsistentRead)
	}
	return 0
}
