package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func mustRead(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// instruction returns the arguments of the Dockerfile's instructions named
// name (FROM, RUN, CMD, …), in order.
func instruction(dockerfile, name string) []string {
	var out []string
	for _, l := range strings.Split(dockerfile, "\n") {
		if rest, ok := strings.CutPrefix(l, name+" "); ok {
			out = append(out, strings.TrimSpace(rest))
		}
	}
	return out
}

// The Dockerfile is what docs/operations.md says it is: its build command,
// base images, user, port, entry point and default flags. CI builds the
// module with the Dockerfile's own build command (.ci/run), since no Docker
// runs there.
func TestDockerfile(t *testing.T) {
	df := mustRead(t, "../Dockerfile")
	doc := mustRead(t, "../docs/operations.md")
	gomod := mustRead(t, "../go.mod")
	settings := mustRead(t, "../app/config.go") // the flags and the environment, read once

	var build string
	for _, r := range instruction(df, "RUN") {
		if strings.Contains(r, "go build") {
			build = r
		}
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(gomod)
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	cmd := instruction(df, "CMD")

	checks := []struct {
		name string
		ok   bool
		got  any
	}{
		{"the build command is static, trimmed and stripped", build == `CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /taskgraph .`, build},
		{"docs/operations.md gives the same build command", build != "" && strings.Contains(doc, "\n"+build+"\n"), build},
		{"the builder is the go.mod's Go", at(instruction(df, "FROM"), 0) == "golang:"+goVersion[1]+" AS build", instruction(df, "FROM")},
		{"the base is scratch: nothing but the binary and CA certificates", at(instruction(df, "FROM"), 1) == "scratch", instruction(df, "FROM")},
		{"it runs as a non-root user", at(instruction(df, "USER"), 0) == "65532:65532", instruction(df, "USER")},
		{"it exposes the default PORT", at(instruction(df, "EXPOSE"), 0) == "8080" && strings.Contains(settings, `env.or("PORT", "8080")`), instruction(df, "EXPOSE")},
		{"the entry point is the binary", at(instruction(df, "ENTRYPOINT"), 0) == `["/taskgraph"]`, instruction(df, "ENTRYPOINT")},
		{"one default command, as documented", len(cmd) == 1 && strings.Contains(doc, "CMD "+cmd[0]+"\n"), cmd},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Errorf("Dockerfile has %q", c.got)
			}
		})
	}
	t.Run("the default flags are the server's", func(t *testing.T) {
		if len(cmd) != 1 {
			t.Fatalf("want one CMD, got %q", cmd)
		}
		flags := regexp.MustCompile(`"-([a-z-]+)(=[^"]*)?"`).FindAllStringSubmatch(cmd[0], -1)
		if len(flags) == 0 {
			t.Fatalf("CMD %s has no flags", cmd[0])
		}
		for _, f := range flags {
			if !regexp.MustCompile(`fs\.\w+Var\([^,]+, "` + regexp.QuoteMeta(f[1]) + `"`).MatchString(settings) {
				t.Errorf("CMD passes -%s, which app/config.go does not define", f[1])
			}
		}
	})
}

// at returns s[i], or "" when s is shorter.
func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}
