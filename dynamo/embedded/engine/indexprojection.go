package engine

import (
	"slices"
	"strings"
)

// An index's projection, as DynamoDB keeps it: ALL (the whole item),
// KEYS_ONLY (the table's and the index's keys) or INCLUDE (the keys and
// the NonKeyAttributes named). A Query or Scan of an index reads its
// entries: the projected attributes only, billed and counted toward 1 MB
// by their size, as DynamoDB bills an index read by its entries' size.

// gsiProjection is a GlobalSecondaryIndex's Projection.
type gsiProjection struct {
	ProjectionType   string
	NonKeyAttributes []string `json:",omitempty"`
}

// maxNonKeyAttributes is the most attributes DynamoDB lets a table's
// indexes project between them.
const maxNonKeyAttributes = 100

// newIndex checks def's projection and makes the index keyed k of a
// table keyed tk.
func newIndex(def *gsiDef, k, tk schema) (*index, error) {
	p := def.Projection
	ix := &index{name: def.IndexName, key: k, items: newTree(), projection: p.ProjectionType}
	switch p.ProjectionType {
	case "ALL", "KEYS_ONLY":
		if len(p.NonKeyAttributes) > 0 {
			return nil, validation("One or more parameter values were invalid: ProjectionType is %s, but NonKeyAttributes is specified", p.ProjectionType)
		}
	case "INCLUDE":
		if len(p.NonKeyAttributes) == 0 {
			return nil, validation("One or more parameter values were invalid: ProjectionType is INCLUDE, but NonKeyAttributes is not specified")
		}
		if len(p.NonKeyAttributes) > maxNonKeyAttributes {
			return nil, validation("One or more parameter values were invalid: Number of projected attributes in all indexes exceeds limit of %d", maxNonKeyAttributes)
		}
		ix.nonKey = slices.Clone(p.NonKeyAttributes)
	case "":
		return nil, validation("One or more parameter values were invalid: Unknown ProjectionType: null")
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'projection.projectionType' failed to satisfy constraint: Member must satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]", p.ProjectionType)
	}
	if ix.projection != "ALL" {
		ix.keep = map[string]bool{}
		for _, n := range []string{tk.hash.name, tk.rng.name, k.hash.name, k.rng.name} {
			if n != "" {
				ix.keep[n] = true
			}
		}
		for _, n := range ix.nonKey {
			ix.keep[n] = true
		}
	}
	return ix, nil
}

// describeProjection is the index's Projection in a TableDescription.
func (ix *index) describeProjection() gsiProjection {
	return gsiProjection{ProjectionType: ix.projection, NonKeyAttributes: ix.nonKey}
}

// entryOf returns what an index entry of it holds, as JSON, and its size:
// the item itself when the index projects ALL (keep nil).
func entryOf(it *item, keep map[string]bool) ([]byte, int, error) {
	if keep == nil {
		return it.raw, it.size, nil
	}
	a, err := it.decode()
	if err != nil {
		return nil, 0, err
	}
	for n := range a {
		if !keep[n] {
			delete(a, n)
		}
	}
	return encodeItem(a), itemSize(a), nil
}

// filterWords are the words of a filter that name no attribute.
var filterWords = map[string]bool{"AND": true, "OR": true, "NOT": true, "BETWEEN": true, "IN": true,
	"attribute_exists": true, "attribute_not_exists": true, "attribute_type": true, "begins_with": true,
	"contains": true, "size": true}

// checkFilterProjected refuses a filter of an index that names an
// attribute its entries do not hold, as DynamoDB does.
func checkFilterProjected(s source, indexName, filter string, names map[string]string) error {
	if s.keep == nil || filter == "" {
		return nil
	}
	var missing []string
	for i := 0; i < len(filter); {
		c := filter[i]
		if c != '#' && c != '_' && !isLetter(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(filter) && (filter[j] == '_' || isLetter(filter[j]) || (filter[j] >= '0' && filter[j] <= '9')) {
			j++
		}
		word := filter[i:j]
		// a value (:v) is skipped with its colon; a path's later parts (a.b, a[0]) are not attributes
		if i > 0 && (filter[i-1] == ':' || filter[i-1] == '.') {
			i = j
			continue
		}
		i = j
		if filterWords[word] {
			continue
		}
		if word[0] == '#' {
			word = names[word]
		}
		if word != "" && !s.keep[word] && !slices.Contains(missing, word) {
			missing = append(missing, word)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return validation("One or more parameter values were invalid: Secondary index %s does not project one or more filter attributes: [%s]",
			indexName, strings.Join(missing, ", "))
	}
	return nil
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
