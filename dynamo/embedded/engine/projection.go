package engine

import (
	"github.com/truora/minidyn/interpreter"
	"github.com/truora/minidyn/interpreter/language"
)

// projection is a projection expression parsed once for every item of a
// call (a BatchGetItem's, a Query's page), as minidyn's interpreter
// applies one (interpreter.Language.Project), but for its cost: that
// parses the expression again for each item and turns every attribute of
// the item into the evaluator's objects; this parses it once and turns
// only the top-level attributes it names.
type projection struct {
	exprs []language.Expression
	top   []string // each expression's top-level attribute
	names map[string]string
	tops  map[string]bool
}

// compileProjection parses p (nil for none).
func (x exprs) compileProjection(p string) (*projection, error) {
	if p == "" {
		return nil, nil
	}
	parser := language.NewParser(language.NewLexer(p))
	es := parser.ParseProjectionExpression()
	if len(parser.Errors()) != 0 {
		return nil, validation("Invalid ProjectionExpression: Syntax error; %v", parser.Errors())
	}
	if err := interpreter.ValidateExpressionAttributeNamesDeclared("ProjectionExpression", p, x.names); err != nil {
		return nil, validation("Invalid ProjectionExpression: %v", err)
	}
	pr := &projection{exprs: es, names: x.names, tops: map[string]bool{}}
	env := language.NewEnvironment()
	env.Aliases = x.names
	for _, e := range es {
		path, err := language.ExtractPath(e, env)
		if err != nil || len(path) == 0 {
			return nil, validation("Invalid ProjectionExpression: %v", err)
		}
		pr.tops[path[0].Key] = true
		pr.top = append(pr.top, path[0].Key)
	}
	return pr, nil
}

// apply returns the attributes of a the projection names.
func (pr *projection) apply(a attrs) (attrs, error) {
	if pr == nil {
		return a, nil
	}
	env := language.NewEnvironment()
	env.Aliases = pr.names
	named := attrs{}
	for k := range pr.tops {
		if v, ok := a[k]; ok {
			named[k] = v
		}
	}
	if err := env.AddAttributes(named); err != nil {
		return nil, validation("Invalid ProjectionExpression: %v", err)
	}
	out := attrs{}
	for i, e := range pr.exprs {
		if named[pr.top[i]] == nil { // a path into an attribute the item lacks: nothing
			continue
		}
		r := language.Eval(e, env)
		if language.IsUndefinedObject(r) {
			continue
		}
		if r.Type() == language.ObjectTypeError {
			return nil, validation("Invalid ProjectionExpression: %s", r.Inspect())
		}
		path, err := language.ExtractPath(e, env)
		if err != nil {
			return nil, validation("Invalid ProjectionExpression: %v", err)
		}
		language.SetProjectedPath(out, path, r.ToDynamoDB())
	}
	return out, nil
}

// projCache is a call's projection, parsed at its first item.
type projCache struct {
	expr string
	pr   *projection
	done bool
}

// of is the projection p parsed once (nil: no cache, or p refused).
func (c *projCache) of(x exprs, p string) *projection {
	if c == nil {
		return nil
	}
	if !c.done || c.expr != p {
		c.expr, c.done = p, true
		c.pr, _ = x.compileProjection(p)
	}
	return c.pr
}
