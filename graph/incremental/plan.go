package incremental

import (
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// The plan of a query with @defer: graphql-js 17's collectFields and
// execution plan (buildExecutionPlan, and the legacy executor's branching
// one), worked out once per operation from its document and variables,
// and written as the selection sets gqlgen executes.
//
// graphql-js collects the fields of an object with the @defer each comes
// from (a deferUsage, nested in the one it is inside) and splits them by
// the set of those: fields whose set is the one of the executor running
// them are resolved by it (inline); each other set is an execution group
// (a task) resolved apart, on the same object, by an executor of its own,
// whose null stops at the group. Everything below a field is planned the
// same way, by the executor that resolves the field. Only the runtime type
// of an abstract position is not known before the data is, so its fields
// are planned for each possible type, each in an inline fragment on that
// type (gqlgen applies the one that matches).
//
// Every synthesized field stands for all the field nodes of its response
// key (one field, so gqlgen merges nothing), without directives (include
// and skip are applied). A field none of whose subtree is deferred (one
// @defer for all its nodes, none active below) keeps the document's own
// selection sets. The plan's size is bounded by the document's: one
// synthesized field per field node and possible type of the abstract
// positions above it (Node's five, at most once on a path).

// deferUsage is graphql-js's DeferUsage: one @defer where it is met for an
// object, with its label and the @defer it is inside (nil: none).
type deferUsage struct {
	label  *string
	parent *deferUsage
	dir    *ast.Directive
}

// fieldDetail is one field node of a response key and the @defer it is
// under (nil: none).
type fieldDetail struct {
	node  *ast.Field
	usage *deferUsage
}

// fieldGroups is a grouped field set: the response keys in the order met,
// each with its field nodes.
type fieldGroups struct {
	keys    []string
	details map[string][]fieldDetail
}

func (g *fieldGroups) add(key string, d ...fieldDetail) {
	if g.details == nil {
		g.details = map[string][]fieldDetail{}
	}
	if _, ok := g.details[key]; !ok {
		g.keys = append(g.keys, key)
	}
	g.details[key] = append(g.details[key], d...)
}

// objectPlan is what a run does at an object of one type: the delivery
// groups it opens there (one per @defer met), the fields it resolves
// (sel), and the tasks it starts on the object.
type objectPlan struct {
	typ    string
	usages []*deferUsage
	sel    ast.SelectionSet
	tasks  []*taskPlan
}

// taskPlan is an execution group: the fields resolved apart on an object,
// for the deliveries of usages (graphql-js's deferUsageSet, in its order).
type taskPlan struct {
	typ    string
	usages []*deferUsage
	sel    ast.SelectionSet
}

func (o *objectPlan) hasWork() bool { return len(o.usages) > 0 || len(o.tasks) > 0 }

// plan is a query's plan: the root's, and for each synthesized field whose
// objects have work, the plan of each possible type; lookahead holds each
// synthesized field's selections as the document has them (lookahead).
type plan struct {
	root      *objectPlan
	spawns    map[*ast.Field]map[string]*objectPlan
	lookahead map[*ast.Field]ast.SelectionSet
}

// planner works out a plan.
type planner struct {
	oc        *graphql.OperationContext
	schema    *ast.Schema
	branching bool // the legacy executor's plan (the 2022-08-24 format)
	out       *plan
}

// newPlan plans oc's operation, a query, on schema.
func newPlan(oc *graphql.OperationContext, schema *ast.Schema, branching bool) *plan {
	p := &planner{oc: oc, schema: schema, branching: branching,
		out: &plan{spawns: map[*ast.Field]map[string]*objectPlan{}, lookahead: map[*ast.Field]ast.SelectionSet{}}}
	query := schema.Query
	c := p.collector(query)
	c.visit(oc.Operation.SelectionSet, nil)
	p.out.root = p.object(query, c.out, c.usages, nil)
	return p.out
}

// object plans the fields g of an object of type typ, met by a run whose
// deferUsageSet is set (nil: the initial one), usages the @defer met there.
func (p *planner) object(typ *ast.Definition, g *fieldGroups, usages []*deferUsage, set []*deferUsage) *objectPlan {
	inline, groups := p.split(g, set)
	o := &objectPlan{typ: typ.Name, usages: usages, sel: p.fields(typ, inline, set)}
	for _, gr := range groups {
		o.tasks = append(o.tasks, &taskPlan{typ: typ.Name, usages: gr.usages, sel: p.fields(typ, gr.fields, gr.usages)})
	}
	return o
}

// taskFields are the fields of one execution group.
type taskFields struct {
	usages []*deferUsage
	fields *fieldGroups
}

// split is buildExecutionPlan: the fields whose deferUsageSet is set's, and
// the others grouped by theirs, in the order met. The branching plan
// (BranchingIncrementalExecutor) splits field nodes, not response keys: a
// field selected in and out of a fragment is resolved by both.
func (p *planner) split(g *fieldGroups, set []*deferUsage) (*fieldGroups, []taskFields) {
	inline := &fieldGroups{}
	var groups []taskFields
	into := func(s []*deferUsage, key string, d ...fieldDetail) {
		if sameSet(s, set) {
			inline.add(key, d...)
			return
		}
		for i := range groups {
			if sameSet(groups[i].usages, s) {
				groups[i].fields.add(key, d...)
				return
			}
		}
		f := &fieldGroups{}
		f.add(key, d...)
		groups = append(groups, taskFields{usages: s, fields: f})
	}
	for _, key := range g.keys {
		details := g.details[key]
		if !p.branching {
			into(filteredUsages(details), key, details...)
			continue
		}
		for _, d := range details {
			var s []*deferUsage
			if d.usage != nil {
				s = []*deferUsage{d.usage}
			}
			into(s, key, d)
		}
	}
	return inline, groups
}

// filteredUsages is getFilteredDeferUsageSet: the @defer of details, none
// if one of them is not deferred, without those inside another of them.
func filteredUsages(details []fieldDetail) []*deferUsage {
	var set []*deferUsage
	for _, d := range details {
		if d.usage == nil {
			return nil
		}
		if !slices.Contains(set, d.usage) {
			set = append(set, d.usage)
		}
	}
	return slices.DeleteFunc(set, func(u *deferUsage) bool {
		for a := u.parent; a != nil; a = a.parent {
			if slices.Contains(set, a) {
				return true
			}
		}
		return false
	})
}

func sameSet(a, b []*deferUsage) bool {
	if len(a) != len(b) {
		return false
	}
	for _, u := range a {
		if !slices.Contains(b, u) {
			return false
		}
	}
	return true
}

// fields synthesizes the selection of g on an object of type parent, for a
// run whose deferUsageSet is set.
func (p *planner) fields(parent *ast.Definition, g *fieldGroups, set []*deferUsage) ast.SelectionSet {
	sel := make(ast.SelectionSet, 0, len(g.keys))
	for _, key := range g.keys {
		details := g.details[key]
		first := details[0].node
		f := &ast.Field{Alias: key, Name: first.Name, Arguments: first.Arguments, Position: first.Position,
			Comment: first.Comment, Definition: first.Definition, ObjectDefinition: first.ObjectDefinition}
		var original ast.SelectionSet
		for _, d := range details {
			original = append(original, d.node.SelectionSet...)
		}
		sel = append(sel, f)
		if len(original) == 0 || first.Definition == nil {
			continue
		}
		if p.plain(details) {
			f.SelectionSet = original
			continue
		}
		p.out.lookahead[f] = original
		named := p.schema.Types[first.Definition.Type.Name()]
		possible := []*ast.Definition{named}
		if named.IsAbstractType() {
			possible = p.schema.GetPossibleTypes(named)
		}
		for _, typ := range possible {
			c := p.collector(typ)
			for _, d := range details {
				c.visit(d.node.SelectionSet, d.usage)
			}
			o := p.object(typ, c.out, c.usages, set)
			if named.IsAbstractType() {
				f.SelectionSet = append(f.SelectionSet, &ast.InlineFragment{TypeCondition: typ.Name, SelectionSet: o.sel,
					ObjectDefinition: typ, Position: first.Position})
			} else {
				f.SelectionSet = o.sel
			}
			if o.hasWork() {
				if p.out.spawns[f] == nil {
					p.out.spawns[f] = map[string]*objectPlan{}
				}
				p.out.spawns[f][typ.Name] = o
			}
		}
	}
	return sel
}

// plain reports whether nothing below details is deferred: they are under
// one @defer (or none), and no @defer is active in their selections.
func (p *planner) plain(details []fieldDetail) bool {
	for _, d := range details {
		if d.usage != details[0].usage || defers(p.oc, d.node.SelectionSet, map[string]bool{}) {
			return false
		}
	}
	return true
}
