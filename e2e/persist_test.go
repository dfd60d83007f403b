package e2e

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// cleanEnv clears the settings that would change what run does.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, v := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_PROFILE", "AWS_ACCESS_KEY_ID", "JWT_SECRET", "JWT_JWKS_URL", "JWT_ISSUER", "JWT_AUDIENCE", "TABLE_NAME",
		"LOG_FORMAT", "LOG_LEVEL", "CURSOR_KEY", "HOST", "ALLOWED_HOSTS"} {
		t.Setenv(v, "")
	}
	t.Setenv("PORT", "0")
	t.Setenv("DATA_DIR", "")
	os.Unsetenv("DATA_DIR") // unset: the default; t.Setenv restores it
}

// server is one in-process run of the server: the App as the binary's Run
// opens and serves it.
type server struct {
	app            *app.App
	url, token     string
	stdout, stderr *testenv.LogBuffer
	stop           func() error // ends the run (App.Serve closes the App) and returns its error
}

// mustStart starts the server with args as the binary's Run does
// (LoadConfig, App.Open, App.Serve), or fails the test. It stops when the
// test ends, if it has not been stopped before.
func mustStart(t *testing.T, args ...string) *server {
	t.Helper()
	s := &server{stdout: &testenv.LogBuffer{}, stderr: &testenv.LogBuffer{}}
	c, err := app.LoadConfig(args, app.ReadEnv(), s.stderr)
	if err != nil {
		t.Fatalf("LoadConfig %q: %v", args, err)
	}
	log, err := c.Logger(s.stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.app = &app.App{Config: c, Log: log, Stdout: s.stdout}
	if err := s.app.Open(ctx); err != nil {
		cancel()
		t.Fatalf("the server did not start: %v\n%s", err, s.stderr)
	}
	s.url, s.token = s.app.URL+"/", s.app.DemoToken
	done := make(chan error, 1)
	go func() { done <- s.app.Serve(ctx) }()
	var once sync.Once
	var stopErr error
	s.stop = func() error {
		once.Do(func() { cancel(); stopErr = <-done })
		return stopErr
	}
	t.Cleanup(func() { _ = s.stop() })
	return s
}

// mustQuery posts a GraphQL query with a token and returns the data, failing
// on any error.
func mustQuery(t *testing.T, url, token, query string) map[string]any {
	t.Helper()
	var data map[string]any
	testenv.MustPostURL(t, url+"query", "Bearer "+token, query, nil, &data)
	return data
}

func projectNames(t *testing.T, url, token string) []string {
	t.Helper()
	data := mustQuery(t, url, token, `{ me { projects(first: 50) { nodes { name } } } }`)
	var names []string
	for _, n := range data["me"].(map[string]any)["projects"].(map[string]any)["nodes"].([]any) {
		names = append(names, n.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	return names
}

func TestRestartKeepsTheDataAndTheToken(t *testing.T) {
	cleanEnv(t)
	dir := filepath.Join(t.TempDir(), "data")

	first := mustStart(t, "-data-dir", dir)
	if first.token == "" {
		t.Fatalf("no token printed:\n%s", first.stdout)
	}
	mustQuery(t, first.url, first.token, `mutation { createProject(input: {name: "Kept across restarts"}) { id } }`)
	before := projectNames(t, first.url, first.token)
	if err := first.stop(); err != nil {
		t.Fatalf("first run: %v", err)
	}
	info, err := os.Stat(filepath.Join(dir, "dev-secret"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("dev secret: %v, mode %v; want 0600", err, info.Mode().Perm())
	}

	second := mustStart(t, "-data-dir", dir)
	defer second.stop()
	after := projectNames(t, second.url, first.token) // the old token
	if !slices.Equal(after, before) || !slices.Contains(after, "Kept across restarts") {
		t.Fatalf("projects after the restart %q, before %q", after, before)
	}
	if n := strings.Count(strings.Join(after, "|"), "Website relaunch"); n != 1 {
		t.Fatalf("the demo project appears %d times: the demo data was loaded into a kept store", n)
	}
	if strings.Contains(second.stderr.String(), "loaded demo data") {
		t.Error("the second run logged loading the demo data")
	}
	if !strings.Contains(second.stderr.String(), "items=") {
		t.Errorf("the second run did not log the item count:\n%s", second.stderr)
	}
}

func TestMemoryOnlyKeepsNothing(t *testing.T) {
	cleanEnv(t)
	wd := t.TempDir()
	t.Chdir(wd)
	s := mustStart(t, "-data-dir=")
	mustQuery(t, s.url, s.token, `mutation { createProject(input: {name: "Gone"}) { id } }`)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(wd)
	if len(entries) != 0 {
		t.Fatalf("memory only wrote %v", entries)
	}
}

func TestADamagedDataFileStopsTheStart(t *testing.T) {
	cleanEnv(t)
	good := demoDump(t)
	lines := strings.SplitAfter(strings.TrimSuffix(good, "\n"), "\n")
	flipped := []byte(good)
	flipped[strings.Index(good, "Website relaunch")+3] ^= 0x20 // "WebSite relaunch": still JSON, still an item
	for _, tc := range []struct{ name, content, want string }{
		{"a flipped bit in an item", string(flipped), "do not match the checksum"},
		{"cut short before the count", strings.Join(lines[:len(lines)-1], ""), "cut short"},
		{"cut inside a line", good[:len(good)/2], "line"},
		{"an attribute of unknown type", `{"Item":{"PK":{"S":"a"},"SK":{"Q":"b"}}}` + "\n" + `{"Count":1}` + "\n", "line 1"},
		{"not JSON", "hello\n", "line 1"},
		{"a wrong count", lines[0] + `{"Count":2}` + "\n", "says 2 items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "task-manager.jsonl")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			var stderr testenv.LogBuffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a start that is not refused serves until then
			defer cancel()
			err := app.Run(ctx, app.ReadEnv(), []string{"-data-dir", dir}, strings.NewReader(""), io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v; want an error naming %s and saying %q", err, path, tc.want)
			}
			if strings.Contains(stderr.String(), "msg=serving") {
				t.Fatal("it served anyway")
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Fatal("the damaged file was changed")
			}
		})
	}
}

// A data file written before the checksum (its last line {"Count":N},
// version 1) still loads.
func TestADataFileWithoutAChecksumLoads(t *testing.T) {
	cleanEnv(t)
	dump := demoDump(t)
	lines := strings.Split(strings.TrimSuffix(dump, "\n"), "\n")
	lines[len(lines)-1] = fmt.Sprintf(`{"Count":%d}`, len(lines)-1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "task-manager.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustStart(t, "-data-dir", dir)
	if names := projectNames(t, s.url, s.token); !slices.Contains(names, "Website relaunch") {
		t.Fatalf("projects from a data file of version 1: %q", names)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

// A journal damaged before its last record (a bit flipped in its first
// record, or in the middle) stops the start with an error naming the file
// and the offset, and changes nothing: before issue 32 the start went on
// without the records from the damage on, and only warned of a torn
// record.
func TestADamagedJournalStopsTheStart(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct {
		name   string
		record func(n int) int // which of n records gets a flipped bit
	}{{"a bit flipped in the first record", func(int) int { return 0 }}, {"a bit flipped in the middle", func(n int) int { return n / 2 }}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// A store that loads the demo data and ends without a snapshot (a
			// crash): the demo is in the journal only, a record per batch.
			emb, err := embedded.Start()
			if err != nil {
				t.Fatal(err)
			}
			store := mustStore(t, emb)
			path := filepath.Join(dir, "task-manager.jsonl")
			data := &dynamo.DataFile{Path: path, Store: store, Embedded: emb, Journal: dynamo.JournalPrefix(path), JournalSync: true}
			if _, _, err := data.Load(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := store.Import(context.Background(), store.Demo(time.Now())); err != nil {
				t.Fatal(err)
			}
			_ = emb.Close()
			files, _, err := embedded.JournalFiles(data.Journal)
			if err != nil || len(files) != 1 {
				t.Fatalf("journal files %v, %v", files, err)
			}
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			payloads, _, err := embedded.ReadRecords(bytes.NewReader(b))
			if err != nil || len(payloads) < 3 {
				t.Fatalf("the journal holds %d records, %v; want 3 or more", len(payloads), err)
			}
			n, off := tc.record(len(payloads)), 0
			for _, p := range payloads[:n] {
				off += 8 + len(p)
			}
			b[off+8+len(payloads[n])/2] ^= 0x08
			if err := os.WriteFile(files[0], b, 0o600); err != nil {
				t.Fatal(err)
			}

			var stderr testenv.LogBuffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a start that is not refused serves until then
			defer cancel()
			err = app.Run(ctx, app.ReadEnv(), []string{"-data-dir", dir}, strings.NewReader(""), io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), files[0]) || !strings.Contains(err.Error(), fmt.Sprintf("offset %d", off)) {
				t.Fatalf("run = %v; want an error naming %s and the offset %d", err, files[0], off)
			}
			if strings.Contains(stderr.String(), "msg=serving") {
				t.Fatal("it served anyway")
			}
			if got, _ := os.ReadFile(files[0]); !bytes.Equal(got, b) {
				t.Fatal("the damaged journal was changed")
			}
			if after, _, _ := embedded.JournalFiles(data.Journal); !slices.Equal(after, files) {
				t.Fatalf("journal files after the refused start: %v; want %v", after, files)
			}
		})
	}
}

// mustStore returns a store on emb's table task-manager, made if missing,
// whose calls the SDK does not retry.
func mustStore(tb testing.TB, emb *embedded.Store) *dynamo.Store {
	tb.Helper()
	s := dynamo.New(emb.Client(func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }), "task-manager")
	s.Log = slog.New(slog.DiscardHandler)
	if _, err := s.EnsureTable(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// demoDump returns the demo data as a dump.
func demoDump(t *testing.T) string {
	t.Helper()
	emb, err := embedded.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	// The dump is the fixture, not the subject: the SDK's own retries
	// (mustStore has none) ride out a loopback connection dropped under load.
	store := dynamo.New(emb.Client(), "task-manager")
	if _, err := store.EnsureTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := store.Import(context.Background(), store.Demo(time.Now())); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := store.Export(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// sortedLines returns a dump's lines in order, for comparing dumps.
func sortedLines(s string) []string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(l)
	return l
}

func TestExportAndImportMoveTheData(t *testing.T) {
	cleanEnv(t)
	dump := demoDump(t)
	runCmd := func(t *testing.T, stdin string, args ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		err := app.Run(context.Background(), app.ReadEnv(), args, strings.NewReader(stdin), &out, io.Discard)
		return out.String(), err
	}

	t.Run("into the embedded store's data directory and out again", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := runCmd(t, dump, "-data-dir", dir, "import"); err != nil {
			t.Fatal(err)
		}
		out, err := runCmd(t, "", "-data-dir", dir, "export")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sortedLines(out), sortedLines(dump)) {
			t.Fatalf("exported %d lines, imported %d", len(sortedLines(out)), len(sortedLines(dump)))
		}
	})
	t.Run("a dump cut short imports nothing", func(t *testing.T) {
		dir := t.TempDir()
		_, err := runCmd(t, dump[:len(dump)-20], "-data-dir", dir, "import")
		if err == nil || !strings.Contains(err.Error(), "nothing imported") {
			t.Fatalf("import = %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "task-manager.jsonl")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a data file was written: %v", err)
		}
	})
	t.Run("into dynalite and back, equal", func(t *testing.T) {
		ep := os.Getenv("DYNALITE_ENDPOINT")
		if ep == "" {
			t.Skip("DYNALITE_ENDPOINT is not set; scripts/test starts dynalite and sets it")
		}
		t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ep)
		t.Setenv("TABLE_NAME", fmt.Sprintf("export-import-%d", time.Now().UnixNano()))
		if _, err := runCmd(t, dump, "import"); err != nil {
			t.Fatal(err)
		}
		out, err := runCmd(t, "", "export")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sortedLines(out), sortedLines(dump)) {
			t.Fatalf("dynalite gave back %d lines, imported %d", len(sortedLines(out)), len(sortedLines(dump)))
		}
	})
}

func TestTokenCommand(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	token := func(t *testing.T, args ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		err := app.Run(context.Background(), app.ReadEnv(), append([]string{"-data-dir", dir, "token"}, args...), strings.NewReader(""), &out, io.Discard)
		return strings.TrimSpace(out.String()), err
	}
	verify := func(t *testing.T, secret []byte, tok string) string {
		t.Helper()
		sub, err := (&auth.Authenticator{Secret: secret, MaxLifetime: app.DevTokenLifetime}).Verify("Bearer " + tok)
		if err != nil {
			t.Fatalf("the token does not verify: %v", err)
		}
		return sub
	}

	t.Run("signs with the development secret, made on first use", func(t *testing.T) {
		tok, err := token(t, "bob")
		if err != nil {
			t.Fatal(err)
		}
		secret, err := os.ReadFile(filepath.Join(dir, "dev-secret")) // the development secret, made on first use
		if err != nil {
			t.Fatal(err)
		}
		secret = bytes.TrimSpace(secret)
		if sub := verify(t, secret, tok); sub != "bob" {
			t.Fatalf("sub = %q", sub)
		}
	})
	t.Run("the server started afterwards accepts it", func(t *testing.T) {
		tok, err := token(t, "carol")
		if err != nil {
			t.Fatal(err)
		}
		s := mustStart(t, "-data-dir", dir)
		defer s.stop()
		data := mustQuery(t, s.url, tok, `{ me { name } }`)
		if name := data["me"].(map[string]any)["name"]; name != "Carol Chen" {
			t.Fatalf("me = %v", data["me"])
		}
	})
	t.Run("signs with JWT_SECRET when set", func(t *testing.T) {
		t.Setenv("JWT_SECRET", "a-secret-from-the-environment")
		tok, err := token(t, "dave")
		if err != nil {
			t.Fatal(err)
		}
		if sub := verify(t, []byte("a-secret-from-the-environment"), tok); sub != "dave" {
			t.Fatalf("sub = %q", sub)
		}
	})
	for _, args := range [][]string{{"a#b"}, {"with space"}, {""}, {strings.Repeat("x", 129)}, {}, {"bob", "carol"}} {
		t.Run(fmt.Sprintf("refuses %q", args), func(t *testing.T) {
			tok, err := token(t, args...)
			if err == nil || tok != "" {
				t.Fatalf("token %q, err %v; want an error and no token", tok, err)
			}
		})
	}
}

func TestHelpNamesTheFlagsAndTheEnvironment(t *testing.T) {
	cleanEnv(t)
	var out bytes.Buffer
	err := app.Run(context.Background(), app.ReadEnv(), []string{"-h"}, strings.NewReader(""), io.Discard, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run -h = %v, want flag.ErrHelp (exit 0)", err)
	}
	help := out.String()
	for _, want := range []string{"Usage: taskgraph ", "-data-dir", "-production", "token USER", "export", "import",
		"PORT", "TABLE_NAME", "DATA_DIR", "JWT_SECRET", "JWT_JWKS_URL", "AWS_ENDPOINT_URL_DYNAMODB",
		"-cursor-key", "CURSOR_KEY", "-journal-sync",
		"(default 20 with -production, no limit otherwise)",
		"needs JWT_SECRET or JWT_JWKS_URL"} {
		if !strings.Contains(help, want) {
			t.Errorf("-h does not mention %q", want)
		}
	}
	if strings.Contains(help, "go-build") || strings.Contains(help, os.TempDir()) {
		t.Error("-h names a temporary build path")
	}
	conf, err := os.ReadFile(filepath.Join("docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), "needs `JWT_SECRET` or `JWT_JWKS_URL`") {
		t.Error("docs/operations.md's -production line no longer says what -h says (needs JWT_SECRET or JWT_JWKS_URL)")
	}
}
