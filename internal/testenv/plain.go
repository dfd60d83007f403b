package testenv

import (
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// plain turns an attribute value into a comparable Go value.
func plain(v types.AttributeValue) any {
	switch a := v.(type) {
	case *types.AttributeValueMemberS:
		return a.Value
	case *types.AttributeValueMemberN:
		return a.Value
	case *types.AttributeValueMemberBOOL:
		return a.Value
	case *types.AttributeValueMemberL:
		out := make([]any, len(a.Value))
		for i, x := range a.Value {
			out[i] = plain(x)
		}
		return out
	case *types.AttributeValueMemberM:
		out := map[string]any{}
		for k, x := range a.Value {
			out[k] = plain(x)
		}
		return out
	case *types.AttributeValueMemberNULL:
		return nil
	case *types.AttributeValueMemberSS:
		return slices.Sorted(slices.Values(a.Value))
	}
	return v
}
