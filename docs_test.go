package main

import (
	"os"
	"os/exec"
	"path"
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
