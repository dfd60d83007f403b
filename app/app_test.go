package app_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// goroutineStacks returns the stacks of the goroutines running, by their
// first line ("goroutine 7 [select]:" without the state).
func goroutineStacks() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if f := strings.Fields(g); len(f) > 1 {
			out[f[1]] = g
		}
	}
	return out
}

// mustEndGoroutines fails tb unless every goroutine that is not in before
// ends. A goroutine joined by Close may still be returning when Close
// returns, and those of the libraries (NATS's client, net/http's
// connections) end once their sockets close: it waits for them, and a
// goroutine still there after 30 s is a leak, its stack printed. The idle
// workers of the DynamoDB calls' pool (dynamo/client.Go) are the process's,
// not an App's: at most client.MaxConnsPerHost wait for the next call.
func mustEndGoroutines(tb testing.TB, before map[string]string) {
	tb.Helper()
	var left []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		left = left[:0]
		for id, stack := range goroutineStacks() {
			if _, ok := before[id]; !ok && !strings.Contains(stack, "mustEndGoroutines") && !strings.Contains(stack, "dynamo/client.waitForWork") {
				left = append(left, stack)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		slices.Sort(left)
		tb.Fatalf("%d goroutines left after Close:\n\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// An App's Close ends every goroutine its Open started, the JWK Set's
// refresher included: none is left the moment Close returns (those of the
// libraries, NATS's client and net/http's connections, end once their
// sockets close: mustEndGoroutines waits for them).
func TestAppCloseLeavesNoGoroutine(t *testing.T) {
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"keys":[]}`))
	}))
	spans := make(chan struct{}, 100)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		spans <- struct{}{}
	}))
	const secret = "a secret of the test, long enough for HS256"
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL) // the exporter reads it too
	before := goroutineStacks()

	c, err := app.LoadConfig([]string{"-addr", "127.0.0.1:0", "-metrics-addr", "127.0.0.1:0", "-data-dir", filepath.Join(t.TempDir(), "data")},
		app.Env{"JWT_SECRET": secret, "JWT_JWKS_URL": jwks.URL, "OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a := &app.App{Config: c, Log: slog.New(slog.DiscardHandler), Stdout: io.Discard}
	if err := a.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	tok, err := (&auth.Authenticator{Secret: []byte(secret), MaxLifetime: time.Hour}).Sign("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	testenv.MustPostURL(t, a.URL+"/query", "Bearer "+tok, `mutation { createProject(input: {name: "Closed cleanly"}) { id } }`, nil, &data)
	if data["createProject"] == nil {
		t.Fatalf("createProject: %v", data)
	}
	if n := len(goroutineStacks()) - len(before); n < 10 {
		t.Fatalf("%d goroutines started by Open: the broker, the workers, the saver, the listeners are not running", n)
	}
	if !anyStack(goroutineStacks(), "app.refreshJWKS") {
		t.Fatal("no refresher of the JWK Set runs")
	}
	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if anyStack(goroutineStacks(), "app.refreshJWKS") {
		t.Error("the JWK Set's refresher still runs after Close returned: Close does not wait for it")
	}
	if len(spans) == 0 {
		t.Error("no span exported at Close: the telemetry was not on, or not flushed")
	}
	jwks.Close()
	collector.Close()
	http.DefaultClient.CloseIdleConnections()
	mustEndGoroutines(t, before)
}

// anyStack reports whether a goroutine of stacks runs the function fn.
func anyStack(stacks map[string]string, fn string) bool {
	for _, s := range stacks {
		if strings.Contains(s, fn) {
			return true
		}
	}
	return false
}

// A start whose port is taken stops with an error that names the port and
// what to do, before it touches anything: no data directory is made, no
// demo data loaded, no token printed, nothing logged as serving. The same
// holds for the metrics' port.
func TestAStartOnATakenPortTouchesNothing(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	for _, tc := range []struct {
		name, flag string
		args       []string
	}{
		{"the API's port", "-addr", []string{"-addr", addr}},
		{"the metrics' port", "-metrics-addr", []string{"-addr", "127.0.0.1:0", "-metrics-addr", addr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a start that is not refused serves until then
			defer cancel()
			err := app.Run(ctx, app.Env{}, append(tc.args, "-data-dir", dir), strings.NewReader(""), &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), tc.flag) ||
				!strings.Contains(err.Error(), "another process listens there") {
				t.Fatalf("Run = %v; want an error naming %s, %s and the process that holds it", err, addr, tc.flag)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the data directory was touched: %v", err)
			}
			if stdout.Len() != 0 {
				t.Errorf("printed before it could serve:\n%s", stdout.String())
			}
			if logs := stderr.String(); strings.Contains(logs, "demo data") || strings.Contains(logs, "msg=serving") ||
				strings.Contains(logs, "embedded") {
				t.Errorf("logged a start it did not make:\n%s", logs)
			}
		})
	}
}

// A development start's banner says what the table holds: the demo user's
// token on the demo data; on a table without it (-demo=false, or an
// external table, here dynalite's, empty) that the user is not in it.
func TestTheBannerSaysWhatTheTableHolds(t *testing.T) {
	banner := func(t *testing.T, env app.Env, args ...string) string {
		t.Helper()
		c, err := app.LoadConfig(append([]string{"-addr", "127.0.0.1:0"}, args...), env, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		a := &app.App{Config: c, Log: slog.New(slog.DiscardHandler), Stdout: &out}
		if err := a.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if a.DemoToken == "" || !strings.Contains(out.String(), "Authorization: Bearer "+a.DemoToken) {
			t.Fatalf("no token printed:\n%s", out.String())
		}
		return out.String()
	}
	const demo, absent = "A token for the demo user alice", "A token for alice (valid 720h0m0s), who is not in table "
	t.Run("the demo data: the demo user", func(t *testing.T) {
		if b := banner(t, app.Env{}, "-data-dir="); !strings.Contains(b, demo) || !strings.Contains(b, "go run . token bob") {
			t.Errorf("banner:\n%s", b)
		}
	})
	t.Run("a new table without the demo data: no such user", func(t *testing.T) {
		if b := banner(t, app.Env{}, "-data-dir=", "-demo=false"); strings.Contains(b, demo) || !strings.Contains(b, absent+"task-manager: it holds no demo data") ||
			!strings.Contains(b, "go run . token USER") {
			t.Errorf("banner:\n%s", b)
		}
	})
	t.Run("an empty external table: no such user", func(t *testing.T) {
		ep := testenv.Endpoint(t, testenv.Dynalite)
		t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ep) // the SDK reads it itself
		table := fmt.Sprintf("banner-%d", time.Now().UnixNano())
		b := banner(t, app.Env{"AWS_ENDPOINT_URL_DYNAMODB": ep, "TABLE_NAME": table}, "-data-dir", t.TempDir())
		if strings.Contains(b, demo) || !strings.Contains(b, absent+table+": it holds no demo data") {
			t.Errorf("banner:\n%s", b)
		}
	})
}
