package dynamo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// BackfillViolations checks the items of a table, as a checker reads them
// (attribute name → value, a string for a string), against the backfills
// (keys.go) its markers say are done: every item of a backfill's types
// carries the attributes the backfill's set makes of the item's own, which
// are what this version's writes give a new item (most often the keys of
// an index added to a table that held data). One line per attribute out of
// step. An index added with its backfill is checked here with no code of
// the checker's (internal/testenv's CheckTable calls it). A joined
// backfill (backfilljoin.go) checks its items with its violations, which
// may look up any item by its key.
func BackfillViolations(items []map[string]any) []string {
	done := map[string]bool{}
	for _, it := range items {
		if name, ok := strings.CutPrefix(strOf(it, attrSK), "BACKFILL#"); ok && strOf(it, attrPK) == "META" && it["done"] == true {
			done[name] = true
		}
	}
	by := make(map[key]plainItem, len(items))
	for _, it := range items {
		by[key{strOf(it, attrPK), strOf(it, attrSK)}] = it
	}
	lookup := func(k key) plainItem { return by[k] }
	var out []string
	for _, b := range backfills {
		if !done[b.name] {
			continue
		}
		for _, it := range items {
			typ := strOf(it, "type")
			if !slices.Contains(b.types, typ) {
				continue
			}
			if b.violations != nil {
				out = append(out, b.violations(it, lookup)...)
				continue
			}
			src := item{"type": &types.AttributeValueMemberS{Value: typ}}
			for _, a := range b.reads {
				if v, ok := it[a].(string); ok {
					src[a] = &types.AttributeValueMemberS{Value: v}
				}
			}
			for attr, av := range b.set(src) {
				want, isStr := av.(*types.AttributeValueMemberS)
				if got, ok := it[attr].(string); !isStr || !ok || got != want.Value {
					out = append(out, fmt.Sprintf("%s %s %s: %s %#v, want %s (backfill %s)",
						strings.ToLower(typ), strOf(it, attrPK), strOf(it, attrSK), attr, it[attr], showAV(av), b.name))
				}
			}
		}
	}
	return out
}

// plainItem is an item as a checker reads it: attribute name → value, a
// string for a string, a map[string]any for a map.
type plainItem = map[string]any

func strOf(it map[string]any, k string) string { s, _ := it[k].(string); return s }

// showAV shows an attribute value the checker's way: a string quoted.
func showAV(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return fmt.Sprintf("%q", s.Value)
	}
	return fmt.Sprintf("%T", av)
}
