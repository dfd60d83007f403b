package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ruleFacts are the fields whose comparison decides a rule: a project's
// owner, a comment's author, where a membership began (policy.Membership's
// Began) and where an object was born in its project's change log
// (dynamo.Change's Born: who is told it is gone).
var ruleFacts = map[string]bool{"OwnerID": true, "AuthorID": true, "Began": true, "Born": true}

// copiesOfRules returns, for one parsed file, where it decides a rule of
// the policy itself: a comparison (==, !=, <, <=, >, >=, a switch's tag or
// case) of a selector .OwnerID, .AuthorID, .Began or .Born, or a read of a
// profile's copies by index
// (x.Projects[id], comma-ok or not). Writing a copy (x.Projects[id] = name,
// the left of an assignment) is no decision; neither is passing the fields
// on (UserByID(c.AuthorID), a struct literal OwnerID: viewer).
func copiesOfRules(fset *token.FileSet, f *ast.File) []string {
	var found []string
	at := func(n ast.Node, what string) {
		found = append(found, fset.Position(n.Pos()).String()+": "+what)
	}
	fact := func(e ast.Expr) string {
		if s, ok := ast.Unparen(e).(*ast.SelectorExpr); ok && ruleFacts[s.Sel.Name] {
			return s.Sel.Name
		}
		return ""
	}
	written := map[ast.Expr]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.ASSIGN {
				for _, l := range n.Lhs {
					written[ast.Unparen(l)] = true
				}
			}
		case *ast.BinaryExpr:
			switch n.Op {
			case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
				if name := fact(n.X) + fact(n.Y); name != "" {
					at(n, "compares "+name)
				}
			}
		case *ast.SwitchStmt:
			if name := fact(n.Tag); name != "" {
				at(n, "switches on "+name)
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if name := fact(e); name != "" {
					at(e, "compares "+name+" in a case")
				}
			}
		case *ast.IndexExpr:
			if s, ok := ast.Unparen(n.X).(*ast.SelectorExpr); ok && s.Sel.Name == "Projects" && !written[n] {
				at(n, "reads a profile's Projects by index")
			}
		case *ast.CompositeLit:
			if standInProfile(n) {
				at(n, "makes a profile with copies of its projects out of other facts")
			}
		}
		return true
	})
	return found
}

// standInProfile reports whether lit is a domain.User with its Projects
// set: a profile with copies of its user's projects, made where it is no
// read of a profile item (profileReads), to ask a rule of the profile with
// facts of another kind (memberships, say): give the rule those facts
// instead (facts.go).
func standInProfile(lit *ast.CompositeLit) bool {
	s, ok := lit.Type.(*ast.SelectorExpr)
	if !ok || s.Sel.Name != "User" {
		return false
	}
	if x, ok := s.X.(*ast.Ident); !ok || x.Name != "domain" {
		return false
	}
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Projects" {
				return true
			}
		}
	}
	return false
}

// profileReads are the files that make a profile out of its stored item
// (the whole item, or a projection of its copies): the store's reads.
var profileReads = []string{filepath.Join("..", "dynamo", "decode.go"), filepath.Join("..", "dynamo", "syncmark.go")}

// TestEveryRuleIsDecidedInPolicyOnly parses every Go file of the module
// but tests and the files of policy/ and domain/, and fails on a copy of
// a rule (copiesOfRules): who owns a project, who wrote a comment, which
// projects a profile lists, where a membership began and where an object
// was born are facts the other packages read and hand to the policy,
// which alone decides on them; and none makes one fact out of another (a
// profile's copies out of membership items: standInProfile) but the
// store's reads of a profile (profileReads).
func TestEveryRuleIsDecidedInPolicyOnly(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case path == "..":
			case strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata",
				path == filepath.Join("..", "policy"), path == filepath.Join("..", "domain"):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, c := range copiesOfRules(fset, f) {
			if slices.Contains(profileReads, path) && strings.Contains(c, "makes a profile") {
				continue
			}
			t.Errorf("%s: a copy of a rule of package policy; call the policy with the facts instead", c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 { // the walk found the server's files, not a stray directory
		t.Fatalf("parsed %d Go files, want the module's", files)
	}
}

// TestTheOnePlaceCheckCatchesCopies proves copiesOfRules on the shapes a
// copy of a rule takes, and on the reads and writes of the facts that are
// none.
func TestTheOnePlaceCheckCatchesCopies(t *testing.T) {
	for _, c := range []struct {
		name, body string
		copies     int
	}{
		{"the owner compared", `if p.OwnerID != viewer { return }`, 1},
		{"the author compared, reversed", `if viewer == c.AuthorID { return }`, 1},
		{"both in one condition", `ok := c.AuthorID == v || (p.OwnerID) == v; _ = ok`, 2},
		{"a switch on the owner", `switch p.OwnerID { case viewer: }`, 1},
		{"the owner in a case", `switch viewer { case p.OwnerID: }`, 1},
		{"the copies read comma-ok", `_, ok := u.Projects[id]; _ = ok`, 1},
		{"the copies read", `if u.Projects[id] != "" { return }`, 1},
		{"a copy written", `u.Projects[id] = name`, 0},
		{"the author passed on", `load(c.AuthorID)`, 0},
		{"the owner set", `p := domain.Project{OwnerID: viewer}; _ = p`, 0},
		{"another id compared", `if t.ProjectID == id { return }`, 0},
		{"where a membership began compared", `if m.Began <= upTo { return }`, 1},
		{"where an object was born compared", `ok := c.Born > left; _ = ok`, 1},
		{"a membership's start passed on", `m := policy.Membership{Began: born}; _ = m`, 0},
		{"a born passed on", `keep(c.Born)`, 0},
		{"a position compared", `if c.Pos > skip { return }`, 0},
		{"a stand-in profile", `v := &domain.User{ID: m.UserID, Projects: map[string]string{p.ID: p.Name}}; _ = v`, 1},
		{"a profile without copies", `u := domain.User{ID: id, Name: n}; _ = u`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package x\nfunc f() {\n"+c.body+"\n}\n", 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := copiesOfRules(fset, f); len(got) != c.copies {
				t.Errorf("found %q, want %d copies", got, c.copies)
			}
		})
	}
}
