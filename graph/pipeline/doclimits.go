package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// documentLimits refuses, before gqlgen validates a document, the documents
// whose validation (or the walks of the extensions after it) would cost more
// than their size: gqlparser's OverlappingFieldsCanBeMerged rule compares
// every pair of fields of one response name in a selection set, those
// merged from fragments and inline fragments included, and compares pairs
// of fragments; the validator walks every fragment again for each operation
// and fragment that reaches it; gqlgen's complexity limit, shapeLimits and
// requireViewer walk a fragment each time it is spread (2^n times for a
// chain of fragments that spread the next one twice). The bounds (see docs/security.md):
//
//   - MaxNodes: the nodes of the document (fields, fragment spreads, inline
//     fragments, directives, arguments, variable definitions and the values
//     in arguments: list items, object fields) counted in each operation
//     and fragment definition with every fragment spread replaced by the
//     fragment's nodes, recursively; a field or inline fragment inside k
//     nested inline fragments counts 1+k (the overlap rule collects it k+1
//     times). Any walk of the document, the validator's too, visits at most
//     that many nodes.
//   - MaxRepeats: the fields of one response name merged into one selection
//     set, as execution merges them (across inline fragments, fragments and
//     the selections of fields merged into one). The overlap rule compares
//     at most MaxRepeats × MaxNodes pairs of fields.
//   - MaxFragments: the fragment definitions of a document, which bounds
//     the pairs of fragments the overlap rule compares.
//
// A document found in the query cache was parsed and validated once
// already and is not checked again. The check parses the document itself
// (linear, within the same token limit); a document it cannot parse is left
// to gqlgen, which reports the error.
type documentLimits struct {
	cache                              graphql.Cache[*ast.QueryDocument]
	maxTokens                          int
	MaxNodes, MaxRepeats, MaxFragments int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentLimits{}

// newDocumentLimits returns the extension for the handler's options; cache
// is the handler's query cache.
func newDocumentLimits(o Options, cache graphql.Cache[*ast.QueryDocument]) documentLimits {
	if cache == nil {
		cache = graphql.NoCache[*ast.QueryDocument]{}
	}
	return documentLimits{cache: cache, maxTokens: cmp.Or(o.MaxTokens, DefaultMaxTokens),
		MaxNodes:     cmp.Or(o.MaxNodes, DefaultMaxNodes),
		MaxRepeats:   cmp.Or(o.MaxRepeats, DefaultMaxRepeats),
		MaxFragments: cmp.Or(o.MaxFragments, DefaultMaxFragments)}
}

func (documentLimits) ExtensionName() string { return "DocumentLimits" }

func (documentLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (l documentLimits) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if p.Query == "" {
		return nil
	}
	if _, ok := l.cache.Get(ctx, p.Query); ok {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, l.maxTokens)
	if err != nil {
		return nil // gqlgen parses it again and reports the error
	}
	if msg := l.check(doc); msg != "" {
		return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": codes.Complexity}}
	}
	return nil
}

// check returns why doc exceeds a limit, or "".
func (l documentLimits) check(doc *ast.QueryDocument) string {
	if n := len(doc.Fragments); n > l.MaxFragments {
		return fmt.Sprintf("the document has %d fragments; the limit is %d", n, l.MaxFragments)
	}
	c := newDocCounter(doc)
	if n := c.documentNodes(); n > l.MaxNodes {
		count := fmt.Sprint(n)
		if n == maxCount {
			count = fmt.Sprintf("more than %d", maxCount-1)
		}
		return fmt.Sprintf("the document has %s nodes (fields, fragment spreads, inline fragments, directives, arguments, variables and values, each fragment counted every time it is spread); the limit is %d", count, l.MaxNodes)
	}
	// Within MaxNodes, the merging walks cost at most MaxNodes map
	// operations in all.
	var worst repeat
	for _, op := range doc.Operations {
		c.repeats(op.SelectionSet, &worst)
	}
	for _, f := range doc.Fragments {
		c.repeats(f.SelectionSet, &worst)
	}
	if worst.count > l.MaxRepeats {
		return fmt.Sprintf("%d fields of response name %q are merged into one selection set (fragments, inline fragments and fields of the same name merged, as execution does); the limit is %d", worst.count, worst.name, l.MaxRepeats)
	}
	return ""
}

// maxCount is where node counts saturate: 2^50, or a quarter of the
// largest int where an int has 32 bits (so that a sum of two never
// overflows).
const maxCount = min(1<<50, math.MaxInt>>2)

// docCounter counts the nodes of a document with its fragments expanded
// (docNodes, memoised by fragment, so linear in the document) and the
// fields of each response name in the merged selection sets (repeats).
type docCounter struct {
	doc   *ast.QueryDocument
	frags map[string]*ast.FragmentDefinition
	size  map[string]int // nodes of a fragment, expanded; -1 while being counted (a cycle, which validation refuses)
}

func newDocCounter(doc *ast.QueryDocument) *docCounter {
	c := &docCounter{doc: doc, frags: make(map[string]*ast.FragmentDefinition, len(doc.Fragments)),
		size: make(map[string]int, len(doc.Fragments))}
	for _, f := range doc.Fragments {
		if _, ok := c.frags[f.Name]; !ok { // the first of a name, as the validator takes it
			c.frags[f.Name] = f
		}
	}
	return c
}

// add adds counts, saturating at maxCount.
func (c *docCounter) add(a, b int) int { return min(a+b, maxCount) }

// documentNodes counts the nodes of the document's operations and fragment
// definitions, fragments expanded (see documentLimits).
func (c *docCounter) documentNodes() int {
	n := 0
	for _, op := range c.doc.Operations {
		n = c.add(n, c.operationNodes(op))
	}
	for _, f := range c.doc.Fragments {
		n = c.add(n, c.add(c.directives(f.Directives), c.set(f.SelectionSet, 0)))
	}
	return n
}

func (c *docCounter) operationNodes(op *ast.OperationDefinition) int {
	n := c.directives(op.Directives)
	for _, v := range op.VariableDefinitions {
		n = c.add(n, 1+c.directives(v.Directives)+c.value(v.DefaultValue))
	}
	return c.add(n, c.set(op.SelectionSet, 0))
}

func (c *docCounter) fragment(name string) int {
	if n, ok := c.size[name]; ok {
		return max(n, 0) // a cycle counts nothing more
	}
	f := c.frags[name]
	if f == nil {
		return 0
	}
	c.size[name] = -1
	n := c.add(c.directives(f.Directives), c.set(f.SelectionSet, 0))
	c.size[name] = n
	return n
}

// set counts the nodes of a selection set that is nested in inline
// fragments inline levels deep (below its field, fragment or operation):
// its fields and inline fragments count once more for each, since the
// overlap rule collects the fields of a selection set and of all the inline
// fragments nested in it, for each of them.
func (c *docCounter) set(set ast.SelectionSet, inline int) int {
	n := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			n = c.add(n, 1+inline+c.directives(s.Directives))
			for _, a := range s.Arguments {
				n = c.add(n, 1+c.value(a.Value))
			}
			n = c.add(n, c.set(s.SelectionSet, 0))
		case *ast.InlineFragment:
			n = c.add(n, 1+inline+c.directives(s.Directives))
			n = c.add(n, c.set(s.SelectionSet, inline+1))
		case *ast.FragmentSpread:
			n = c.add(n, 1+c.directives(s.Directives))
			n = c.add(n, c.fragment(s.Name))
		}
	}
	return n
}

func (c *docCounter) directives(ds ast.DirectiveList) int {
	n := 0
	for _, d := range ds {
		n = c.add(n, 1)
		for _, a := range d.Arguments {
			n = c.add(n, 1+c.value(a.Value))
		}
	}
	return n
}

// value counts the items and fields inside v (v itself is counted by its
// argument, list or object).
func (c *docCounter) value(v *ast.Value) int {
	if v == nil {
		return 0
	}
	n := 0
	for _, ch := range v.Children {
		n = c.add(n, 1+c.value(ch.Value))
	}
	return n
}

// repeat is a response name merged from count fields.
type repeat struct {
	name  string
	count int
}

// merged is one response name of a merged selection set: how many fields
// it merges and their merged selections.
type merged struct {
	count    int
	children map[string]*merged
}

// repeats walks set with its fragments expanded, merging the fields of one
// response name as execution does, notes in worst the name merged from the
// most fields, if more than worst's, and returns the merged set. Its cost is
// the set's expanded nodes.
func (c *docCounter) repeats(set ast.SelectionSet, worst *repeat) map[string]*merged {
	w := mergeWalk{c: c, path: map[string]bool{}, worst: worst}
	into := map[string]*merged{}
	w.walk(set, into)
	return into
}

type mergeWalk struct {
	c     *docCounter
	path  map[string]bool // fragments being expanded (cycles are refused by validation)
	worst *repeat
}

func (w *mergeWalk) walk(set ast.SelectionSet, into map[string]*merged) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			name := s.Alias
			if name == "" {
				name = s.Name
			}
			m := into[name]
			if m == nil {
				m = &merged{}
				into[name] = m
			}
			m.count++
			if m.count > w.worst.count {
				*w.worst = repeat{name: name, count: m.count}
			}
			if len(s.SelectionSet) > 0 {
				if m.children == nil {
					m.children = map[string]*merged{}
				}
				w.walk(s.SelectionSet, m.children)
			}
		case *ast.InlineFragment:
			w.walk(s.SelectionSet, into)
		case *ast.FragmentSpread:
			if f := w.c.frags[s.Name]; f != nil && !w.path[s.Name] {
				w.path[s.Name] = true
				w.walk(f.SelectionSet, into)
				delete(w.path, s.Name)
			}
		}
	}
}
