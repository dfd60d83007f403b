package pipeline

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// pageArguments refuses, before anything runs (so nothing is read), an
// operation with a connection field given both `first` and `last` (Relay's
// cursor connections ask for one direction): BAD_USER_INPUT. An argument
// counts as given when the document writes it with a value other than
// null (a variable the request leaves out, or sends as null, is not
// given): the schema's default of `first` is no `first` given. The
// resolvers then read a page backwards whenever `last` is given
// (pageKeyOf). Any field given both is refused, so a connection added
// later is covered.
type pageArguments struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = pageArguments{}

func (pageArguments) ExtensionName() string                   { return "PageArguments" }
func (pageArguments) Validate(graphql.ExecutableSchema) error { return nil }

func (pageArguments) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	w := pageWalk{doc: oc.Doc, vars: oc.Variables, seen: map[string]bool{}}
	w.selections(oc.Operation.SelectionSet)
	if w.bad == nil {
		return nil
	}
	err := &gqlerror.Error{Message: fmt.Sprintf("%s: first and last cannot be given together: first reads a page forwards (with after), last backwards (with before)", w.bad.Name),
		Extensions: map[string]any{"code": codes.BadUserInput}}
	if w.bad.Position != nil {
		err.Locations = []gqlerror.Location{{Line: w.bad.Position.Line, Column: w.bad.Position.Column}}
	}
	return err
}

// pageWalk finds the first field of an operation given both first and last.
type pageWalk struct {
	doc  *ast.QueryDocument
	vars map[string]any
	seen map[string]bool
	bad  *ast.Field
}

func (w *pageWalk) selections(set ast.SelectionSet) {
	for _, sel := range set {
		if w.bad != nil {
			return
		}
		switch s := sel.(type) {
		case *ast.Field:
			if w.given(s, "first") && w.given(s, "last") {
				w.bad = s
				return
			}
			w.selections(s.SelectionSet)
		case *ast.InlineFragment:
			w.selections(s.SelectionSet)
		case *ast.FragmentSpread:
			if f := w.doc.Fragments.ForName(s.Name); f != nil && !w.seen[s.Name] {
				w.seen[s.Name] = true
				w.selections(f.SelectionSet)
			}
		}
	}
}

// given reports whether the field is given the argument with a value other
// than null.
func (w *pageWalk) given(f *ast.Field, name string) bool {
	a := f.Arguments.ForName(name)
	if a == nil || a.Value == nil {
		return false
	}
	v, err := a.Value.Value(w.vars)
	return err == nil && v != nil
}
