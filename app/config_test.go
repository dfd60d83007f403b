package app

import (
	"bytes"
	"errors"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// envReads parses the server's source (every non-test file of the module
// but the measuring tools' and the test harness's) and returns the
// variables it reads, by name, and where the process environment itself is
// read (os.Getenv, os.LookupEnv, os.Environ).
func envReads(tb testing.TB) (names map[string]string, direct []string) {
	tb.Helper()
	names = map[string]string{}
	skip := map[string]bool{"bench": true, "deploy": true, "clients": true, "scripts": true, "node_modules": true,
		filepath.Join("internal", "testenv"): true}
	varName := regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	fset := token.NewFileSet()
	const root = ".." // the module's
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." && (skip[rel] || strings.HasPrefix(d.Name(), ".")) {
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
		f, err := parser.ParseFile(fset, rel, src, 0)
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
	if _, err := LoadConfig([]string{"-h"}, Env{}, &out); !errors.Is(err, flag.ErrHelp) {
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
	s, err := LoadConfig(nil, Env{"CORS_ORIGINS": "https://a.example", "JWT_JWKS_URL": "https://idp.example/jwks",
		"OTEL_TRACES_EXPORTER": "console", "AWS_PROFILE": "p", "PORT": "9000", "HOST": "::1"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if s.CORSOrigins != "https://a.example" || s.JWKSURL != "https://idp.example/jwks" || s.otel["OTEL_TRACES_EXPORTER"] != "console" ||
		s.StoreKind != "aws" || s.aws.local || !s.aws.credentials || s.Addr != "[::1]:9000" {
		t.Fatalf("settings from the environment given: %+v", s)
	}
}

func TestSettingsChooseTheStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  Env
		want string
	}{
		{"no AWS configuration: embedded", Env{}, "embedded"},
		{"an endpoint: aws", Env{"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1"}, "aws"},
		{"a region: aws", Env{"AWS_REGION": "eu-west-1"}, "aws"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := LoadConfig(nil, tc.env, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.StoreKind; got != tc.want {
				t.Fatalf("store = %q, want %q", got, tc.want)
			}
		})
	}
}

// -sync-retention keeps deletions at least the 30 days sync promises: less
// stops the start with an error naming the flag; more is taken.
func TestSyncRetentionBelowThirtyDaysStopsTheStart(t *testing.T) {
	if _, err := LoadConfig([]string{"-sync-retention", "719h"}, Env{}, io.Discard); err == nil || !strings.Contains(err.Error(), "-sync-retention") {
		t.Errorf("-sync-retention 719h: %v; want an error naming the flag", err)
	}
	s, err := LoadConfig([]string{"-sync-retention", "1000h"}, Env{}, io.Discard)
	if err != nil || s.SyncRetention != 1000*time.Hour {
		t.Errorf("-sync-retention 1000h: %v, %v", s.SyncRetention, err)
	}
	if s, err := LoadConfig(nil, Env{}, io.Discard); err != nil || s.SyncRetention != 30*24*time.Hour {
		t.Errorf("the default: %v, %v; want 720h", s.SyncRetention, err)
	}
}

// -h says each flag's default once: a flag whose default comes from the
// environment (-log-format from LOG_FORMAT, …) says so in its usage and
// gets no second "(default …)" from the flag package, whatever the
// environment holds; and the variable still sets the default, which the
// flag overrides.
func TestHelpSaysEachDefaultOnce(t *testing.T) {
	env := Env{"LOG_FORMAT": "json", "LOG_LEVEL": "warn", "ALLOWED_HOSTS": "dev.example.test", "NATS_URL": "nats://127.0.0.1:4222",
		"METRICS_ADDR": ":9090", "CURSOR_KEY": "a key that -h must not print"}
	var out bytes.Buffer
	if _, err := LoadConfig([]string{"-h"}, env, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	help := out.String()
	flags := help[strings.Index(help, "\nFlags:"):strings.Index(help, "\nEnvironment")]
	for _, f := range strings.Split(flags, "\n  -")[1:] {
		if n := strings.Count(f, "(default"); n > 1 {
			t.Errorf("-%s says its default %d times:\n%s", strings.Fields(f)[0], n, f)
		}
	}
	for _, want := range []string{"log lines as text or json (default text, or LOG_FORMAT)\n", "error (default info, or LOG_LEVEL)\n"} {
		if !strings.Contains(flags, want) {
			t.Errorf("-h does not say %q", want)
		}
	}
	if strings.Contains(help, "json\"") || strings.Contains(help, "dev.example.test") || strings.Contains(help, "a key that") {
		t.Errorf("-h prints a value of the environment as a flag's default:\n%s", flags)
	}

	c, err := LoadConfig(nil, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.LogFormat != "json" || c.LogLevel != "warn" || c.AllowedHosts != "dev.example.test" || c.Live.URL != "nats://127.0.0.1:4222" ||
		c.MetricsAddr != ":9090" {
		t.Errorf("the environment's defaults: %q %q %q %q %q", c.LogFormat, c.LogLevel, c.AllowedHosts, c.Live.URL, c.MetricsAddr)
	}
	c, err = LoadConfig([]string{"-log-format=text", "-log-level=debug", "-allowed-hosts=", "-nats-url=", "-metrics-addr="}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.LogFormat != "text" || c.LogLevel != "debug" || c.AllowedHosts != "" || c.Live.URL != "" || c.MetricsAddr != "" {
		t.Errorf("the flags over the environment: %q %q %q %q %q", c.LogFormat, c.LogLevel, c.AllowedHosts, c.Live.URL, c.MetricsAddr)
	}
	if c, err := LoadConfig(nil, Env{}, io.Discard); err != nil || c.LogFormat != "text" || c.LogLevel != "info" {
		t.Errorf("no variable: %q %q, %v; want text, info", c.LogFormat, c.LogLevel, err)
	}
}
