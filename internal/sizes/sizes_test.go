package sizes

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sizes a reader can hold.
const (
	maxFileLines = 400
	maxFuncLines = 100
)

// stillSplitting are the files being split by concern right now, on
// branches of their own (a name ending in / is a folder's files); the
// check passes over them. Take a file off the list when its split lands
// (the test logs the entries that no longer cover an oversize file); add
// none.
var stillSplitting = []string{}

// splitting returns the entry of stillSplitting that covers file rel, or
// "".
func splitting(rel string) string { return splittingIn(stillSplitting, rel) }

// splittingIn returns the entry of list that covers file rel, or "".
func splittingIn(list []string, rel string) string {
	for _, s := range list {
		if rel == s || strings.HasSuffix(s, "/") && strings.HasPrefix(rel, s) {
			return s
		}
	}
	return ""
}

// oversize returns what in one parsed file is over its size: the file
// itself (lines long) and each function, by its lines from func to its
// closing brace (a method, a function, or a function literal outside
// them, e.g. a package-level var's).
func oversize(fset *token.FileSet, f *ast.File, lines int) []string {
	var found []string
	if lines > maxFileLines {
		found = append(found, fmt.Sprintf("%d lines, over %d", lines, maxFileLines))
	}
	measure := func(n ast.Node, name string) {
		if l := fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1; l > maxFuncLines {
			found = append(found, fmt.Sprintf("%s: %d lines, over %d", name, l, maxFuncLines))
		}
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				name = recvName(fd.Recv.List[0].Type) + "." + name
			}
			measure(fd, name)
			continue
		}
		ast.Inspect(d, func(n ast.Node) bool {
			if fl, ok := n.(*ast.FuncLit); ok {
				measure(fl, "a function literal at line "+fmt.Sprint(fset.Position(fl.Pos()).Line))
				return false
			}
			return true
		})
	}
	return found
}

// recvName is a method's receiver type's name (T for *T and T[K]).
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

// TestNoHandWrittenFileOrFunctionOverItsSize parses every Go file of the
// module but tests and generated code (a "Code generated … DO NOT EDIT."
// line) and fails on a file over 400 lines or a function over 100, but
// for the files still being split (stillSplitting).
func TestNoHandWrittenFileOrFunctionOverItsSize(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	covers := map[string]bool{} // an entry of stillSplitting: whether it covers an oversize file
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		files++
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		found := oversize(fset, f, bytes.Count(src, []byte("\n")))
		if s := splitting(rel); s != "" {
			covers[s] = covers[s] || len(found) > 0
			return nil
		}
		for _, o := range found {
			t.Errorf("%s: %s: split it by concern", rel, o)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 { // the walk found the server's files, not a stray directory
		t.Fatalf("parsed %d hand-written Go files, want the module's", files)
	}
	for _, s := range stillSplitting {
		if !covers[s] {
			t.Logf("%s is within its sizes: take it off stillSplitting", s)
		}
	}
}

// TestTheSizeCheckMeasures proves oversize on files and functions at and
// over their sizes, methods, and function literals inside functions and
// outside them.
func TestTheSizeCheckMeasures(t *testing.T) {
	body := func(n int) string { return strings.Repeat("\t_ = 0\n", n) }
	for _, c := range []struct {
		name, src string
		lines     int // the file's length; 0: the source's own
		want      []string
	}{
		{"a function of 100 lines", "func f() {\n" + body(98) + "}\n", 0, nil},
		{"a function of 101 lines", "func f() {\n" + body(99) + "}\n", 0,
			[]string{"f: 101 lines, over 100"}},
		{"a method, its receiver a pointer", "func (s *S) m() {\n" + body(120) + "}\n", 0,
			[]string{"S.m: 122 lines, over 100"}},
		{"a generic type's method", "func (s S[K]) m() {\n" + body(99) + "}\n", 0,
			[]string{"S.m: 101 lines, over 100"}},
		{"a literal inside a function counts as the function", "func f() {\n\tg := func() {\n" + body(97) + "\t}\n\t_ = g\n}\n", 0,
			[]string{"f: 102 lines, over 100"}},
		{"a literal at package level", "var v = func() {\n" + body(100) + "}\n", 0,
			[]string{"a function literal at line 2: 102 lines, over 100"}},
		{"a doc comment is not the function's", "// f\n" + strings.Repeat("// .\n", 50) + "func f() {\n" + body(98) + "}\n", 0, nil},
		{"a file of 400 lines", "func f() {}\n", 400, nil},
		{"a file of 401 lines", "func f() {}\n", 401, []string{"401 lines, over 400"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			src := "package x\n" + c.src
			f, err := parser.ParseFile(fset, "x.go", src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			lines := c.lines
			if lines == 0 {
				lines = strings.Count(src, "\n")
			}
			if got := oversize(fset, f, lines); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("oversize = %q, want %q", got, c.want)
			}
		})
	}
}

// TestStillSplittingCoversItsFilesOnly proves splitting on the list's
// files and folders, and on names that only look like them.
func TestStillSplittingCoversItsFilesOnly(t *testing.T) {
	for rel, want := range map[string]string{
		"graph/sync.go":                "graph/sync.go",
		"internal/testenv/testenv.go":  "internal/testenv/",
		"internal/testenv/new/file.go": "internal/testenv/",
		"graph/syncer.go":              "",
		"graph/sync.go.orig":           "",
		"internal/testenvx/a.go":       "",
		"x/graph/sync.go":              "",
		"dynamo/list.go":               "",
	} {
		if got := splittingIn([]string{"graph/sync.go", "internal/testenv/"}, rel); got != want {
			t.Errorf("splitting(%q) = %q, want %q", rel, got, want)
		}
	}
}
