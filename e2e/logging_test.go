package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/taskgraph/taskgraph/app"
	"io"
	"strings"
	"testing"
)

// mustJSONLines parses every line of out as a JSON object, failing the test
// on any other line.
func mustJSONLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for line := range strings.Lines(out) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON (%v): %q\nall:\n%s", err, line, out)
		}
		lines = append(lines, m)
	}
	return lines
}

// mustStartJSON runs the server with args (which make it log JSON) until
// its "serving" line, and returns the server and that line's address.
func mustStartJSON(t *testing.T, args ...string) (*server, string) {
	t.Helper()
	s := mustStart(t, args...)
	for _, l := range mustJSONLines(t, s.stderr.String()) {
		if l["msg"] == "serving" {
			if l["addr"] != s.url {
				t.Fatalf("the serving line says %v, the server is at %s", l["addr"], s.url)
			}
			return s, s.url
		}
	}
	t.Fatalf("no JSON serving line:\n%s", s.stderr)
	return nil, ""
}

func TestLogFormatJSON(t *testing.T) {
	cases := []struct {
		name string
		env  string
		args []string
	}{
		{"-log-format json", "", []string{"-log-format", "json", "-data-dir="}},
		{"LOG_FORMAT=json", "json", []string{"-data-dir="}},
		{"-log-format json over LOG_FORMAT=text", "text", []string{"-log-format=json", "-data-dir="}},
	}
	for _, c := range cases {
		t.Run(c.name+" makes every server line JSON, the operation lines included", func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("LOG_FORMAT", c.env)
			s, addr := mustStartJSON(t, c.args...)
			if !strings.HasPrefix(addr, "http://127.0.0.1:") { // loopback only, outside production
				t.Errorf("serving addr = %q", addr)
			}
			if got := mustQuery(t, addr, s.token, `query Me { me { id } }`); got["me"] == nil {
				t.Fatalf("no viewer: %v", got)
			}
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
			msgs := map[string]map[string]any{}
			for _, l := range mustJSONLines(t, s.stderr.String()) {
				if l["level"] == nil || l["time"] == nil {
					t.Errorf("line without level or time: %v", l)
				}
				msgs[l["msg"].(string)] = l
			}
			for _, want := range []string{"using the embedded in-process store in memory only (-data-dir is empty): the data is gone when the process ends",
				"loaded demo data", "serving", "graphql", "shutting down"} {
				if msgs[want] == nil {
					t.Errorf("no %q line in:\n%s", want, s.stderr)
				}
			}
			if op := msgs["graphql"]; op != nil && (op["operation"] != "Me" || op["outcome"] != "OK") {
				t.Errorf("operation line %v, want operation Me, outcome OK", op)
			}
			if strings.Contains(s.stderr.String(), s.token) {
				t.Error("the log holds the demo token")
			}
		})
	}
}

func TestLogFormatTextByDefault(t *testing.T) {
	cleanEnv(t)
	s := mustStart(t, "-data-dir=") // finds the text line msg=serving
	mustQuery(t, s.url, s.token, `query Me { me { id } }`)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if out := s.stderr.String(); !strings.Contains(out, "msg=graphql operation=Me type=query") || strings.Contains(out, `{"time"`) {
		t.Errorf("want text lines with the operation line, got:\n%s", out)
	}
}

func TestLogSettingsReachTheCommands(t *testing.T) {
	const embeddedLine = "using the embedded in-process store in memory only"
	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		json     bool
		logsOpen bool
	}{
		{"export logs JSON with -log-format json", nil, []string{"-log-format=json", "-data-dir=", "export"}, true, true},
		{"export logs JSON with LOG_FORMAT=json", map[string]string{"LOG_FORMAT": "json"}, []string{"-data-dir=", "export"}, true, true},
		{"-log-level warn drops the info lines", nil, []string{"-log-level=warn", "-data-dir=", "export"}, false, false},
		{"LOG_LEVEL=error drops the info lines", map[string]string{"LOG_LEVEL": "error"}, []string{"-data-dir=", "export"}, false, false},
		{"-log-level debug keeps them", map[string]string{"LOG_LEVEL": "error"}, []string{"-log-level", "DEBUG", "-data-dir=", "export"}, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cleanEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var stderr bytes.Buffer
			if err := app.Run(context.Background(), app.ReadEnv(), c.args, strings.NewReader(""), io.Discard, &stderr); err != nil {
				t.Fatalf("run %v: %v\n%s", c.args, err, stderr.String())
			}
			out := stderr.String()
			if got := strings.Contains(out, embeddedLine); got != c.logsOpen {
				t.Errorf("the store's info line logged: %v, want %v:\n%s", got, c.logsOpen, out)
			}
			if c.json {
				logLines := strings.Split(out, "\n")
				var jsonPart strings.Builder
				for _, l := range logLines {
					if strings.HasPrefix(l, "{") {
						jsonPart.WriteString(l + "\n")
					}
				}
				if lines := mustJSONLines(t, jsonPart.String()); len(lines) == 0 || !strings.HasPrefix(lines[0]["msg"].(string), embeddedLine) {
					t.Errorf("want the store's line as JSON first, got:\n%s", out)
				}
			}
		})
	}
}

func TestBadLogSettingsStopTheStart(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"an unknown format", []string{"-log-format", "xml"}, nil, "-log-format \"xml\": want text or json"},
		{"an unknown LOG_FORMAT", nil, map[string]string{"LOG_FORMAT": "yaml"}, "-log-format \"yaml\""},
		{"an unknown level", []string{"-log-level", "loud"}, nil, "-log-level \"loud\": want debug, info, warn or error"},
		{"a level offset", []string{"-log-level", "info+2"}, nil, "-log-level \"info+2\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cleanEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var stderr bytes.Buffer
			err := app.Run(context.Background(), app.ReadEnv(), append(c.args, "-data-dir="), strings.NewReader(""), io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("run = %v, want an error with %q", err, c.want)
			}
			if stderr.Len() != 0 {
				t.Errorf("logged before refusing: %s", stderr.String())
			}
		})
	}
}
