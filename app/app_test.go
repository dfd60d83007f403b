package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/auth"
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

func TestAppCloseLeavesNoGoroutine(t *testing.T) {
	cleanEnv(t)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"keys":[]}`))
	}))
	spans := make(chan struct{}, 100)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		spans <- struct{}{}
	}))
	t.Setenv("JWT_SECRET", "a secret of the test, long enough for HS256")
	t.Setenv("JWT_JWKS_URL", jwks.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL) // the exporter reads it too
	before := goroutineStacks()

	s, err := loadSettings([]string{"-addr", "127.0.0.1:0", "-metrics-addr", "127.0.0.1:0",
		"-data-dir", filepath.Join(t.TempDir(), "data")}, ReadEnv(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	app := &App{Settings: s, Log: slog.New(slog.DiscardHandler), Stdout: io.Discard}
	if err := app.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	tok, err := (&auth.Authenticator{Secret: []byte(s.secret), MaxLifetime: time.Hour}).Sign("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	data := mustQuery(t, app.Instance.URL+"/", tok, `mutation { createProject(input: {name: "Closed cleanly"}) { id } }`)
	if data["createProject"] == nil {
		t.Fatalf("createProject: %v", data)
	}
	if n := len(goroutineStacks()) - len(before); n < 10 {
		t.Fatalf("%d goroutines started by Open: the broker, the workers, the saver, the listeners are not running", n)
	}
	if err := app.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if len(spans) == 0 {
		t.Error("no span exported at Close: the telemetry was not on, or not flushed")
	}
	jwks.Close()
	collector.Close()
	http.DefaultClient.CloseIdleConnections()
	mustEndGoroutines(t, before)
}
