package pipeline

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// shapeLimits refuses, before any read, operations nested deeper than
// MaxDepth object levels or with more than MaxAliases aliased fields.
// Connection plumbing (edges, node, nodes, pageInfo) is not a level, so
// Relay-style and nodes-style queries count alike: the contract's dashboard,
// me → projects → tasks → comments → author, is 5 levels deep.
//
// Introspection subtrees (__schema, __type) read no data and follow their
// own rules, so that the standard introspection queries of IDEs and code
// generators pass: their depth is not part of the operation's depth;
// instead each subtree may be at most MaxIntrospectionDepth levels deep,
// nest ofType at most MaxOfTypeDepth times and hold no alias, and an
// operation may have at most MaxIntrospectionFields of them. gqlparser's
// MaxIntrospectionDepth rule also bounds the nesting of __Type's list
// fields (fields → type → fields …), which is what could fan out.
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
	case l.NoIntrospection && w.introspects > 0:
		return &gqlerror.Error{Message: "introspection is disabled on this server",
			Extensions: map[string]any{"code": errcode.ValidationFailed}}
	case w.introspects > MaxIntrospectionFields:
		msg = fmt.Sprintf("the operation has %d introspection fields (__schema, __type); the limit is %d", w.introspects, MaxIntrospectionFields)
	case w.introAlias != "":
		msg = fmt.Sprintf("introspection (__schema, __type) may not contain aliases; found %q", w.introAlias)
	case w.introDepth > MaxIntrospectionDepth:
		msg = fmt.Sprintf("an introspection field (__schema, __type) is %d levels deep; the limit is %d", w.introDepth, MaxIntrospectionDepth)
	case w.ofType > MaxOfTypeDepth:
		msg = fmt.Sprintf("ofType is nested %d levels; the limit is %d", w.ofType, MaxOfTypeDepth)
	case depth > l.MaxDepth:
		msg = fmt.Sprintf("the operation is %d levels deep; the limit is %d", depth, l.MaxDepth)
	case w.aliases > l.MaxAliases:
		msg = fmt.Sprintf("the operation has %d aliased fields; the limit is %d", w.aliases, l.MaxAliases)
	default:
		return nil
	}
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": codes.Complexity}}
}

// Limits of introspection subtrees (see shapeLimits). graphql-js 16's
// getIntrospectionQuery, every option on, is 14 levels deep with ofType
// nested 9 times; the deepest type reference a schema needs, [[T!]!]!, has
// 5 wrappers.
const (
	MaxIntrospectionFields = 10
	MaxIntrospectionDepth  = 16
	MaxOfTypeDepth         = 10
)

type shapeWalk struct {
	doc     *ast.QueryDocument
	aliases int
	// introspects counts the __schema and __type fields of the operation.
	introspects int
	// introDepth and ofType are the deepest introspection subtree and ofType
	// chain; introAlias is the first alias met inside introspection.
	introDepth, ofType int
	introAlias         string
	seen               map[string]bool // fragments on the current path (validation refuses cycles; this is belt and braces)
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
				w.introspects++
				w.introDepth = max(w.introDepth, 1+w.introspection(s.SelectionSet, 0))
				continue // no level of the operation's depth
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

// introspection returns the depth of an introspection selection set, noting
// the deepest ofType chain (ofTypes: the chain's length above set) and the
// first alias.
func (w *shapeWalk) introspection(set ast.SelectionSet, ofTypes int) int {
	deepest := 0
	for _, sel := range set {
		d := 0
		switch s := sel.(type) {
		case *ast.Field:
			if s.Alias != "" && s.Alias != s.Name && w.introAlias == "" {
				w.introAlias = s.Alias
			}
			if len(s.SelectionSet) > 0 {
				chain := 0
				if s.Name == "ofType" {
					chain = ofTypes + 1
					w.ofType = max(w.ofType, chain)
				}
				d = 1 + w.introspection(s.SelectionSet, chain)
			}
		case *ast.InlineFragment:
			d = w.introspection(s.SelectionSet, ofTypes)
		case *ast.FragmentSpread:
			if f := w.doc.Fragments.ForName(s.Name); f != nil && !w.seen[s.Name] {
				w.seen[s.Name] = true
				d = w.introspection(f.SelectionSet, ofTypes)
				delete(w.seen, s.Name)
			}
		}
		deepest = max(deepest, d)
	}
	return deepest
}
