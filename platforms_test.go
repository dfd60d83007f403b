package main

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// platforms are where the server is built: CI builds linux/amd64 only, so
// a package's files for the others are checked here (a cold cross-compile
// of every dependency takes minutes on CI's 2 cores).
var platforms = []struct{ goos, goarch string }{
	{"linux", "amd64"}, {"linux", "arm64"}, {"linux", "386"},
	{"darwin", "arm64"}, {"windows", "amd64"}, {"freebsd", "amd64"},
}

// TestEveryPlatformDeclaresWhatItsFilesUse fails when a package uses on
// one platform a name that no file built there declares (park_linux.go's
// stub in park_other.go left behind, say), or a constant that overflows
// int on 32 bits. Each package is
// type-checked as each platform's build selects its files; the imported
// packages are stood in for by empty ones, so only the package's own
// names are judged (an error about what an import holds is ignored, and
// so is one the check reports on linux/amd64 too, which CI builds).
func TestEveryPlatformDeclaresWhatItsFilesUse(t *testing.T) {
	dirs := map[string]bool{}
	_ = filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || (d.IsDir() && p != "." && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), "."))) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			dirs[filepath.Dir(p)] = true
		}
		return nil
	})
	if len(dirs) == 0 {
		t.Fatal("the walk found no package to check")
	}
	for _, dir := range slices.Sorted(func(yield func(string) bool) {
		for d := range dirs {
			if !yield(d) {
				return
			}
		}
	}) {
		// linux/amd64, which CI builds, is the baseline: what the empty
		// stand-ins for imports make the check report there (a field of an
		// embedded imported type, say) is no error of the platform's.
		base := map[string]bool{}
		for _, msg := range typeErrors(t, dir, platforms[0].goos, platforms[0].goarch) {
			base[msg] = true
		}
		for _, pl := range platforms[1:] {
			for _, msg := range typeErrors(t, dir, pl.goos, pl.goarch) {
				if !base[msg] {
					t.Errorf("%s on %s/%s: %s", dir, pl.goos, pl.goarch, msg)
				}
			}
		}
	}
}

// typeErrors type-checks the non-test files of dir that goos/goarch builds,
// with empty packages for its imports, and returns the errors that are the
// package's own: an undeclared name, a missing method of its own type, an
// overflow.
func typeErrors(t *testing.T, dir, goos, goarch string) []string {
	t.Helper()
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = goos, goarch, false
	pkg, err := ctx.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("%s on %s/%s: %v", dir, goos, goarch, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	imported := map[string]bool{}
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			n := strings.Trim(im.Path.Value, `"`)
			if im.Name != nil {
				n = im.Name.Name
			}
			imported[n[strings.LastIndex(n, "/")+1:]] = true
		}
		files = append(files, f)
	}
	var own []string
	conf := types.Config{
		Importer: emptyImports{},
		Sizes:    types.SizesFor("gc", goarch),
		Error: func(err error) {
			msg := err.(types.Error).Msg
			if ofImport(msg, imported) {
				return
			}
			if strings.HasPrefix(msg, "undefined: ") || strings.Contains(msg, "has no field or method") || strings.Contains(msg, "overflows") {
				own = append(own, err.Error())
			}
		},
	}
	_, _ = conf.Check(pkg.ImportPath, fset, files, nil)
	return own
}

// ofImport reports whether msg is about a name an import holds ("undefined:
// unix.Flock"), which the empty stand-ins cannot answer.
func ofImport(msg string, imported map[string]bool) bool {
	name, ok := strings.CutPrefix(msg, "undefined: ")
	if !ok {
		return false
	}
	q, _, dotted := strings.Cut(name, ".")
	return dotted && imported[q]
}

// emptyImports stands in for every import with an empty, complete package.
type emptyImports struct{}

func (emptyImports) Import(path string) (*types.Package, error) {
	name := path[strings.LastIndex(path, "/")+1:]
	if i := strings.IndexAny(name, ".-"); i > 0 {
		name = name[:i]
	}
	if strings.HasPrefix(name, "v") && len(name) <= 3 { // a major version's suffix: .../dataloader/v7
		dir := strings.TrimSuffix(path, "/"+name)
		name = dir[strings.LastIndex(dir, "/")+1:]
	}
	p := types.NewPackage(path, name)
	p.MarkComplete()
	return p, nil
}
