package app

import (
	"bytes"
	"errors"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// envReads parses the server's source (every non-test file of the module
// but the measuring tools' and the test harness's) and returns the
// variables it reads, by name, and where the process Env itself is
// read (os.Getenv, os.LookupEnv, os.Environ).
func envReads(tb testing.TB) (names map[string]string, direct []string) {
	tb.Helper()
	names = map[string]string{}
	skip := map[string]bool{"bench": true, "deploy": true, "clients": true, "scripts": true, "node_modules": true,
		filepath.Join("internal", "testenv"): true}
	varName := regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (skip[path] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var callee string
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				callee = fn.Name
			case *ast.SelectorExpr:
				callee = fn.Sel.Name
				if x, ok := fn.X.(*ast.Ident); ok && x.Name == "os" && (callee == "Getenv" || callee == "LookupEnv" || callee == "Environ") {
					direct = append(direct, fset.Position(call.Pos()).String())
				}
			}
			if len(call.Args) == 0 || !slices.Contains([]string{"get", "lookup", "or", "env", "getenv", "Getenv", "LookupEnv"}, callee) {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, _ := strconv.Unquote(lit.Value); varName.MatchString(v) {
					names[v] = fset.Position(lit.Pos()).String()
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return names, direct
}

func TestTheEnvironmentIsReadOnceAndEveryVariableIsInTheHelp(t *testing.T) {
	names, direct := envReads(t)
	t.Run("only app/config.go reads the process environment", func(t *testing.T) {
		for _, at := range direct {
			if !strings.HasPrefix(at, filepath.Join("app", "config.go")+":") {
				t.Errorf("%s reads the environment: read it in app/config.go (ReadEnv) and pass the value on", at)
			}
		}
		if len(direct) == 0 {
			t.Fatal("no read of the Env found at all: the scan is broken")
		}
	})
	var out bytes.Buffer
	if _, err := loadSettings([]string{"-h"}, Env{}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	help := out.String()
	env := help[strings.Index(help, "\nEnvironment"):]
	t.Run("every variable read is in -h", func(t *testing.T) {
		if len(names) < 20 {
			t.Fatalf("found %d variables read (%v): the scan is broken", len(names), names)
		}
		for name, at := range names {
			if !regexp.MustCompile(`(^|[^A-Z_])` + name + `([^A-Z_]|$)`).MatchString(env) {
				t.Errorf("%s reads %s, which -h's Environment does not list (envHelp)", at, name)
			}
		}
	})
	t.Run("every variable in -h is read", func(t *testing.T) {
		for _, row := range envHelp {
			for _, name := range regexp.MustCompile(`[A-Z][A-Z0-9_]+`).FindAllString(row[0], -1) {
				if _, ok := names[name]; !ok && name != "OTEL_" {
					t.Errorf("-h lists %s, which the code never reads", name)
				}
			}
		}
	})
	t.Run("every flag is in -h", func(t *testing.T) {
		for _, f := range []string{"-addr", "-data-dir", "-production", "-metrics-addr", "-cursor-key", "-sync-retention", "-journal-sync"} {
			if !strings.Contains(help, "\n  "+f+" ") && !strings.Contains(help, "\n  "+f+"\n") {
				t.Errorf("-h does not list %s", f)
			}
		}
	})
}

func TestSettingsReadTheEnvironmentTheyAreGiven(t *testing.T) {
	s, err := loadSettings(nil, Env{"CORS_ORIGINS": "https://a.example", "JWT_JWKS_URL": "https://idp.example/jwks",
		"OTEL_TRACES_EXPORTER": "console", "AWS_PROFILE": "p", "PORT": "9000", "HOST": "::1"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if s.corsOrigins != "https://a.example" || s.jwksURL != "https://idp.example/jwks" || s.otel["OTEL_TRACES_EXPORTER"] != "console" ||
		s.store != "aws" || s.aws.local || !s.aws.credentials || s.addr != "[::1]:9000" {
		t.Fatalf("settings from the Env given: %+v", s)
	}
}
