package subscription

import (
	"encoding/json"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Subscribers whose answers to an event are the same bytes share its
// resolution and its encoding. Every recipient of an event is a member of
// its project (the hub's check, and the re-check once it is resolved), so
// what the event's fields show within the project is the same for all of
// them: two subscriptions are answered alike when they run the same
// selection with the same values of the variables it uses, unless it
// selects a field whose answer depends on who asks (sharedFields: a user's
// email, their other projects and tasks, a tag's tasks across projects).
// Such a selection is resolved per viewer; the final event of a member who
// left (policy.FinalEvent) is resolved apart, as a non-member sees it.

// group is the subscriptions of one selection and the values of the
// variables it uses: the operation of the first one to subscribe stands
// for all (its arguments of projectEvents are not read once the event is
// given).
type group struct {
	key string
	oc  *graphql.OperationContext
	// perViewer: the selection reads what depends on the viewer.
	perViewer bool
	n         int // subscriptions in the group
}

// join returns the group of oc's subscription, counting it in.
func (s *Server) join(oc *graphql.OperationContext) *group {
	key := groupKey(oc)
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[key]
	if g == nil {
		g = &group{key: key, oc: oc, perViewer: !sharedSelection(oc)}
		s.groups[key] = g
	}
	g.n++
	return g
}

// leave counts a subscription of g out.
func (s *Server) leave(g *group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.n--; g.n <= 0 {
		delete(s.groups, g.key)
	}
}

// groupKey identifies what an event's answer depends on besides the
// event: the document, the operation, and the variables its selection
// uses (not those of projectEvents' own arguments: a subscription
// resumed with after: its last cursor is answered like the others).
func groupKey(oc *graphql.OperationContext) string {
	used := map[string]any{}
	seen := map[string]bool{}
	var walk func(set ast.SelectionSet)
	value := func(v *ast.Value) {
		var visit func(v *ast.Value)
		visit = func(v *ast.Value) {
			if v == nil {
				return
			}
			if v.Kind == ast.Variable {
				used[v.Raw] = oc.Variables[v.Raw]
			}
			for _, c := range v.Children {
				visit(c.Value)
			}
		}
		visit(v)
	}
	directives := func(ds ast.DirectiveList) {
		for _, d := range ds {
			for _, a := range d.Arguments {
				value(a.Value)
			}
		}
	}
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch x := sel.(type) {
			case *ast.Field:
				for _, a := range x.Arguments {
					value(a.Value)
				}
				directives(x.Directives)
				walk(x.SelectionSet)
			case *ast.InlineFragment:
				directives(x.Directives)
				walk(x.SelectionSet)
			case *ast.FragmentSpread:
				directives(x.Directives)
				if f := oc.Doc.Fragments.ForName(x.Name); f != nil && !seen[x.Name] {
					seen[x.Name] = true
					walk(f.SelectionSet)
				}
			}
		}
	}
	for _, f := range rootFields(oc) {
		walk(f.SelectionSet) // below projectEvents: its own arguments are not the answer's
	}
	vars, _ := json.Marshal(used) // sorted keys
	return oc.RawQuery + "\x00" + oc.OperationName + "\x00" + string(vars)
}

// rootFields returns the fields of the subscription's root selection.
func rootFields(oc *graphql.OperationContext) []*ast.Field {
	var out []*ast.Field
	var walk func(set ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch x := sel.(type) {
			case *ast.Field:
				out = append(out, x)
			case *ast.InlineFragment:
				walk(x.SelectionSet)
			case *ast.FragmentSpread:
				if f := oc.Doc.Fragments.ForName(x.Name); f != nil {
					walk(f.SelectionSet)
				}
			}
		}
	}
	if oc.Operation != nil {
		walk(oc.Operation.SelectionSet)
	}
	return out
}

// sharedFields are the fields whose answer, within an event of a project,
// is the same for every member of the project, by type. Any other field
// (User.email: the viewer's own only; User.projects, assignedTasks,
// overdueTasks and Tag.tasks: lists across projects, filtered by the
// viewer's memberships) makes its selection resolved per viewer. A field
// added to the schema is per viewer until it is listed here
// (TestEveryFieldIsClassifiedForSharing).
var sharedFields = map[string]string{
	"ProjectEvent":      "cursor kind at actor projectId subjectId task comment project",
	"Task":              "id title description status dueDate project assignee tags comments createdAt updatedAt version commentCount",
	"Comment":           "id body author task createdAt",
	"Project":           "id name description owner members createdAt tasks taskCounts",
	"ProjectMember":     "user role",
	"TaskCounts":        "total todo inProgress done",
	"User":              "id name createdAt",
	"Tag":               "id name",
	"TaskConnection":    "edges nodes pageInfo",
	"TaskEdge":          "cursor node",
	"CommentConnection": "edges nodes pageInfo",
	"CommentEdge":       "cursor node",
	"PageInfo":          "hasNextPage endCursor hasPreviousPage startCursor",
}

// SharedFields returns sharedFields' fields of a type (for the test that
// every field of the schema is classified).
func SharedFields(typ string) []string { return strings.Fields(sharedFields[typ]) }

var shared = func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for typ, fields := range sharedFields {
		m[typ] = map[string]bool{}
		for _, f := range strings.Fields(fields) {
			m[typ][f] = true
		}
	}
	return m
}()

// sharedSelection reports whether every field below projectEvents is
// answered alike for every member (sharedFields).
func sharedSelection(oc *graphql.OperationContext) bool {
	seen := map[string]bool{}
	var ok func(set ast.SelectionSet) bool
	ok = func(set ast.SelectionSet) bool {
		for _, sel := range set {
			switch x := sel.(type) {
			case *ast.Field:
				if x.Name != "__typename" && (x.ObjectDefinition == nil || !shared[x.ObjectDefinition.Name][x.Name]) {
					return false
				}
				if !ok(x.SelectionSet) {
					return false
				}
			case *ast.InlineFragment:
				if !ok(x.SelectionSet) {
					return false
				}
			case *ast.FragmentSpread:
				f := oc.Doc.Fragments.ForName(x.Name)
				if f == nil {
					return false
				}
				if !seen[x.Name] {
					seen[x.Name] = true
					if !ok(f.SelectionSet) {
						return false
					}
				}
			}
		}
		return true
	}
	for _, f := range rootFields(oc) {
		if !ok(f.SelectionSet) {
			return false
		}
	}
	return true
}
