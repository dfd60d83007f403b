package main

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestEveryGoFileIsInTheCodeMap fails when a Go file (tests and generated
// resolvers aside) is missing from docs/design.md's code map of its
// directory: the "Code map of `dir/`" section, or for directories without
// one, "Code map of `internal/`" (as `sub/file.go`) or "the rest" (as
// `dir/file.go`).
func TestEveryGoFileIsInTheCodeMap(t *testing.T) {
	doc, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, part := range strings.Split(string(doc), "\n## ")[1:] {
		title, body, _ := strings.Cut(part, "\n")
		sections[title] = body
	}
	out, err := exec.Command("git", "ls-files", "*.go").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "node_modules/") {
			continue
		}
		dir, name := path.Split(f)
		var section, want string
		switch {
		case dir != "" && sections["Code map of `"+dir+"`"] != "":
			section, want = "Code map of `"+dir+"`", name
		case strings.HasPrefix(dir, "internal/"):
			section, want = "Code map of `internal/`", strings.TrimPrefix(f, "internal/")
		case dir == "":
			section, want = "Code map of the rest", name
		default:
			section, want = "Code map of the rest", f
		}
		if !strings.Contains(sections[section], "`"+want+"`") {
			t.Errorf("%s is not in docs/design.md's %q", f, section)
		}
	}
}

// guides are the documents a user follows step by step (the others in
// docs/ are reference and design): every command block in them says what
// runs it.
var guides = []string{"docs/scaling.md", "docs/live-clients.md", "docs/errors.md"}

// block is a fenced block of a guide and the marker above it.
type block struct {
	lang, marker, body string
}

var markerRE = regexp.MustCompile(`<!-- (run by|checked by|excerpt of): ([^ ]+)[^>]*-->\n` + "```" + `(\w*)\n`)

// blocks returns the fenced blocks of doc, each with the marker comment on
// the line before it ("" when there is none).
func blocks(doc string) []block {
	var out []block
	parts := strings.Split(doc, "```")
	for i := 1; i+1 < len(parts); i += 2 {
		lang, body, _ := strings.Cut(parts[i], "\n")
		b := block{lang: lang, body: body}
		before := parts[i-1]
		if j := strings.LastIndex(before, "<!-- "); j >= 0 && strings.Count(before[j:], "\n") == 1 {
			if m := markerRE.FindStringSubmatch(before[j:] + "```" + lang + "\n"); m != nil {
				b.marker = m[1] + ": " + m[2]
			}
		}
		out = append(out, b)
	}
	return out
}

// TestTheGuidesRunWhatTheyShow: every shell block of a guide is run by a
// test or a script a test runs, or (a deployment's commands, which need a
// cluster or AWS) names the test that checks the file it applies; a code
// excerpt is verbatim in the file a test compiles and runs. The scaling
// recipe is `scripts/cluster recipe`'s output, line for line; the errors
// guide lists every code of docs/security.md.
func TestTheGuidesRunWhatTheyShow(t *testing.T) {
	tests := testNames(t)
	for _, g := range guides {
		doc := mustReadFile(t, g)
		for i, b := range blocks(doc) {
			kind, what, _ := strings.Cut(b.marker, ": ")
			switch {
			case b.lang != "sh" && b.lang != "ts" && b.lang != "js":
				continue // data shown (JSON, log lines), not commands
			case b.marker == "":
				t.Errorf("%s, block %d (%s): no <!-- run by: … --> marker says what runs it", g, i+1, b.lang)
			case what == "scripts/cluster":
				out, err := exec.Command("scripts/cluster", "recipe").Output()
				if err != nil {
					t.Fatal(err)
				}
				if string(out) != b.body {
					t.Errorf("%s, block %d is not `scripts/cluster recipe`'s output:\n%s\nwant:\n%s", g, i+1, b.body, out)
				}
			case kind == "excerpt of":
				if !strings.Contains(mustReadFile(t, what), b.body) {
					t.Errorf("%s, block %d is not verbatim in %s", g, i+1, what)
				}
			case !tests[what]:
				t.Errorf("%s, block %d: %s %s, which is no test of this repository", g, i+1, kind, what)
			}
		}
	}
	codes := regexp.MustCompile("`([A-Z][A-Z_]+)`").FindAllStringSubmatch(section(t, "docs/security.md", "Error codes"), -1)
	errs := mustReadFile(t, "docs/errors.md")
	for _, c := range codes {
		if !strings.Contains(errs, "| `"+c[1]+"`") && !strings.Contains(errs, ", `"+c[1]+"`") {
			t.Errorf("docs/errors.md does not tell what to do about %s", c[1])
		}
	}
}

func mustReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the body of a document's "## title" section.
func section(t *testing.T, path, title string) string {
	doc := mustReadFile(t, path)
	_, rest, ok := strings.Cut(doc, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", path, title)
	}
	body, _, _ := strings.Cut(rest, "\n## ")
	return body
}

// testNames returns the names of the repository's Go tests.
func testNames(t *testing.T) map[string]bool {
	names := map[string]bool{}
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	_ = filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != "." {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			for _, m := range re.FindAllStringSubmatch(mustReadFile(t, p), -1) {
				names[m[1]] = true
			}
		}
		return nil
	})
	return names
}

// chainMarker is the line above docs/design.md's block of the dependency
// chain ("Wiring"): one line per package of the module, `pkg: imports…`,
// its imports the module's own packages (the root package is `main`).
const chainMarker = "<!-- checked by: TestTheDependencyChainIsGoLists -->"

// TestTheDependencyChainIsGoLists fails when docs/design.md's dependency
// chain is not the one `go list` shows: a package of the module (tests
// apart) missing from the block or in it but gone, an import of one of the
// module's packages the block lacks, or one it names that the code no
// longer has.
func TestTheDependencyChainIsGoLists(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	module := strings.Fields(mustReadFile(t, "go.mod"))[1]
	local := func(p string) (string, bool) {
		switch {
		case p == module:
			return "main", true
		case strings.HasPrefix(p, module+"/"):
			return strings.TrimPrefix(p, module+"/"), true
		}
		return "", false
	}
	have := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, _ := local(f[0])
		have[pkg] = map[string]bool{}
		for _, imp := range f[1:] {
			if q, ok := local(imp); ok {
				have[pkg][q] = true
			}
		}
	}
	doc := section(t, "docs/design.md", "Wiring")
	_, rest, ok := strings.Cut(doc, chainMarker+"\n```\n")
	if !ok {
		t.Fatalf("docs/design.md's Wiring has no block under %s", chainMarker)
	}
	block, _, _ := strings.Cut(rest, "```")
	said := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		pkg, imps, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("docs/design.md's dependency chain: %q is not `pkg: imports…`", line)
		}
		said[pkg] = map[string]bool{}
		for _, imp := range strings.Fields(imps) {
			said[pkg][imp] = true
		}
	}
	for pkg, imps := range have {
		if said[pkg] == nil {
			t.Errorf("docs/design.md's dependency chain has no line for %s (go list: %s)", pkg, keys(imps))
			continue
		}
		for imp := range imps {
			if !said[pkg][imp] {
				t.Errorf("docs/design.md's dependency chain lacks %s → %s", pkg, imp)
			}
		}
	}
	for pkg, imps := range said {
		if have[pkg] == nil {
			t.Errorf("docs/design.md's dependency chain names %s, which go list does not list", pkg)
			continue
		}
		for imp := range imps {
			if !have[pkg][imp] {
				t.Errorf("docs/design.md's dependency chain says %s → %s, which the code does not import", pkg, imp)
			}
		}
	}
}

// keys returns a set's members, sorted, separated by spaces.
func keys(set map[string]bool) string {
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
