package pipeline

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// DocCounts are what documentLimits bounds in a document, and the cost
// proxies those bounds bound.
type DocCounts struct {
	// Nodes are the document's nodes, fragments expanded.
	Nodes int
	// Repeats is the most fields merged under one response name in one
	// selection set; Fragments the fragment definitions.
	Repeats, Fragments int
	// FieldPairs is the number of pairs of fields of one response name in
	// each merged selection set, summed: what the overlap rule compares.
	FieldPairs int
}

// DocumentCounts returns query's DocCounts; ok is false when it does not
// parse within DefaultMaxTokens.
func DocumentCounts(query string) (_ DocCounts, ok bool) {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, DefaultMaxTokens)
	if err != nil {
		return DocCounts{}, false
	}
	c := newDocCounter(doc)
	nodes := c.documentNodes()
	if nodes > 1_000_000 { // the merging walk would take as long
		return DocCounts{Nodes: nodes, Repeats: maxCount, Fragments: len(doc.Fragments), FieldPairs: maxCount}, true
	}
	var worst repeat
	pairs := 0
	for _, op := range doc.Operations {
		pairs += fieldPairs(c.repeats(op.SelectionSet, &worst))
	}
	for _, f := range doc.Fragments {
		pairs += fieldPairs(c.repeats(f.SelectionSet, &worst))
	}
	return DocCounts{Nodes: nodes, Repeats: worst.count, Fragments: len(doc.Fragments), FieldPairs: pairs}, true
}

func fieldPairs(set map[string]*merged) int {
	n := 0
	for _, m := range set {
		n += m.count*(m.count-1)/2 + fieldPairs(m.children)
	}
	return n
}

// DocumentWithinLimits tells whether the handler's default document limits
// let query through to validation.
func DocumentWithinLimits(query string) bool {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, DefaultMaxTokens)
	return err == nil && newDocumentLimits(Options{}, nil).check(doc) == ""
}

// DocumentNodes returns the nodes of query, fragments expanded (linear in
// the document); -1 if it does not parse within DefaultMaxTokens.
func DocumentNodes(query string) int {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, DefaultMaxTokens)
	if err != nil {
		return -1
	}
	return newDocCounter(doc).documentNodes()
}
