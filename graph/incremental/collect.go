package incremental

import (
	"slices"

	"github.com/vektah/gqlparser/v2/ast"
)

// collector is graphql-js 17's collectFields (visitSelectionSets) for one
// object of a runtime type: the fields met, by response key, each with
// the @defer it is under, and the @defer met (usages), in the order met.
type collector struct {
	p       *planner
	runtime *ast.Definition
	// visited: the fragments spread so far, each with the @defer (by its
	// directive) it was spread under; plain: once not deferred.
	visited map[string]*fragmentVisits
	out     *fieldGroups
	usages  []*deferUsage
}

type fragmentVisits struct {
	plain bool
	dirs  []*ast.Directive
}

func (p *planner) collector(runtime *ast.Definition) *collector {
	return &collector{p: p, runtime: runtime, visited: map[string]*fragmentVisits{}, out: &fieldGroups{}}
}

// visit collects set under usage (nil: not deferred).
func (c *collector) visit(set ast.SelectionSet, usage *deferUsage) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if c.included(s.Directives) {
				c.out.add(s.Alias, fieldDetail{node: s, usage: usage})
			}
		case *ast.InlineFragment:
			if !c.included(s.Directives) || !c.matches(s.TypeCondition) {
				continue
			}
			if u := c.deferUsage(s.Directives, usage); u != nil {
				c.usages = append(c.usages, u)
				c.visit(s.SelectionSet, u)
			} else {
				c.visit(s.SelectionSet, usage)
			}
		case *ast.FragmentSpread:
			c.spread(s, usage)
		}
	}
}

// spread collects a fragment spread: once per @defer it is spread under,
// not again once spread without one.
func (c *collector) spread(s *ast.FragmentSpread, usage *deferUsage) {
	if !c.included(s.Directives) {
		return
	}
	f := c.p.oc.Doc.Fragments.ForName(s.Name)
	if f == nil || !c.matches(f.TypeCondition) {
		return
	}
	nu := c.deferUsage(s.Directives, usage)
	u := usage
	if nu != nil {
		u = nu
	}
	v := c.visited[s.Name]
	if v == nil {
		v = &fragmentVisits{}
		c.visited[s.Name] = v
	}
	if v.plain || u != nil && slices.Contains(v.dirs, u.dir) {
		return
	}
	if nu != nil {
		c.usages = append(c.usages, nu)
	}
	if u == nil {
		v.plain = true
	} else {
		v.dirs = append(v.dirs, u.dir)
	}
	c.visit(f.SelectionSet, u)
}

// included applies @skip and @include.
func (c *collector) included(directives ast.DirectiveList) bool {
	if d := directives.ForName("skip"); d != nil {
		if on, _ := d.ArgumentMap(c.p.oc.Variables)["if"].(bool); on {
			return false
		}
	}
	if d := directives.ForName("include"); d != nil {
		if on, ok := d.ArgumentMap(c.p.oc.Variables)["if"].(bool); ok && !on {
			return false
		}
	}
	return true
}

// matches reports whether a fragment's type condition applies to the
// runtime type (doesFragmentConditionMatch).
func (c *collector) matches(cond string) bool {
	if cond == "" || cond == c.runtime.Name {
		return true
	}
	def := c.p.schema.Types[cond]
	if def == nil || !def.IsAbstractType() {
		return false
	}
	return slices.ContainsFunc(c.p.schema.GetPossibleTypes(def), func(d *ast.Definition) bool { return d.Name == c.runtime.Name })
}

// deferUsage is getDeferUsage: the @defer of directives, unless absent or
// its if argument is false, inside parent.
func (c *collector) deferUsage(directives ast.DirectiveList, parent *deferUsage) *deferUsage {
	d := directives.ForName("defer")
	if d == nil {
		return nil
	}
	args := d.ArgumentMap(c.p.oc.Variables)
	if on, ok := args["if"].(bool); ok && !on {
		return nil
	}
	u := &deferUsage{parent: parent, dir: d}
	if l, ok := args["label"].(string); ok {
		u.label = &l
	}
	return u
}
