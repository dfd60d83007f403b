package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// shapeLimits refuses, before any read, operations nested deeper than
// MaxDepth object levels or with more than MaxAliases aliased fields.
// Connection plumbing (edges, node, nodes, pageInfo) is not a level, so
// Relay-style and nodes-style queries count alike: the contract's dashboard,
// me → projects → tasks → comments → author, is 5 levels deep.
type shapeLimits struct {
	MaxDepth   int
	MaxAliases int
	// NoIntrospection refuses __schema and __type (production mode).
	NoIntrospection bool
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = shapeLimits{}

func (shapeLimits) ExtensionName() string { return "ShapeLimits" }

func (shapeLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (l shapeLimits) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	w := shapeWalk{doc: oc.Doc, seen: map[string]bool{}}
	depth := w.depth(oc.Operation.SelectionSet)
	var msg string
	switch {
	case l.NoIntrospection && w.introspects:
		return &gqlerror.Error{Message: "introspection is disabled on this server",
			Extensions: map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}}
	case depth > l.MaxDepth:
		msg = fmt.Sprintf("the operation is %d levels deep; the limit is %d", depth, l.MaxDepth)
	case w.aliases > l.MaxAliases:
		msg = fmt.Sprintf("the operation has %d aliased fields; the limit is %d", w.aliases, l.MaxAliases)
	default:
		return nil
	}
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": CodeComplexity}}
}

type shapeWalk struct {
	doc     *ast.QueryDocument
	aliases int
	// introspects is set when the operation asks for __schema or __type.
	introspects bool
	seen        map[string]bool // fragments on the current path (validation refuses cycles; this is belt and braces)
}

var plumbing = map[string]bool{"edges": true, "node": true, "nodes": true, "pageInfo": true}

func (w *shapeWalk) depth(set ast.SelectionSet) int {
	deepest := 0
	for _, sel := range set {
		d := 0
		switch s := sel.(type) {
		case *ast.Field:
			if s.Alias != "" && s.Alias != s.Name {
				w.aliases++
			}
			if s.Name == "__schema" || s.Name == "__type" {
				w.introspects = true
			}
			if len(s.SelectionSet) > 0 {
				d = w.depth(s.SelectionSet)
				if !plumbing[s.Name] {
					d++
				}
			}
		case *ast.InlineFragment:
			d = w.depth(s.SelectionSet)
		case *ast.FragmentSpread:
			if f := w.doc.Fragments.ForName(s.Name); f != nil && !w.seen[s.Name] {
				w.seen[s.Name] = true
				d = w.depth(f.SelectionSet)
				delete(w.seen, s.Name)
			}
		}
		deepest = max(deepest, d)
	}
	return deepest
}
