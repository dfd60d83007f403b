package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// httpGet gets url and returns the status and the body.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// The server's routes around /query: the IDE at / with the demo token
// filled in, /healthz (200 while the table answers, 503 once it is gone),
// 404 elsewhere. The App runs on a store of the test's (the demo data in
// it), its authenticator made from the configuration as a development
// start's.
func TestRoutes(t *testing.T) {
	emb, err := embedded.Start()
	if err != nil {
		t.Fatal(err)
	}
	store := app.NewStore(emb.Client(func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }), "task-manager", slog.New(slog.DiscardHandler), nil)
	if _, err := store.EnsureTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := store.Import(context.Background(), store.Demo(time.Now())); err != nil {
		t.Fatal(err)
	}
	c, err := app.LoadConfig([]string{"-addr=127.0.0.1:0", "-data-dir="}, app.Env{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a := &app.App{Config: c, Store: store, Stdout: io.Discard}
	if err := a.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tok := a.DemoToken
	if tok == "" {
		t.Fatal("a development start made no demo token")
	}

	t.Run("the IDE at / has the demo token filled in", func(t *testing.T) {
		code, body := httpGet(t, a.URL+"/")
		if code != 200 || !strings.Contains(body, "graphiql") || !strings.Contains(body, tok) {
			t.Fatalf("GET / = %d, graphiql page with token: %v", code, strings.Contains(body, tok))
		}
	})
	t.Run("POST /query answers the demo user", func(t *testing.T) {
		var d struct{ Me struct{ Name string } }
		testenv.MustPostURL(t, a.URL+"/query", "Bearer "+tok, "{ me { name } }", nil, &d)
		if d.Me.Name != "Alice Example" {
			t.Fatalf("me = %+v", d.Me)
		}
	})
	t.Run("healthz is 200 while the table is reachable", func(t *testing.T) {
		if code, _ := httpGet(t, a.URL+"/healthz"); code != 200 {
			t.Fatalf("GET /healthz = %d", code)
		}
	})
	t.Run("an unknown path is 404", func(t *testing.T) {
		if code, _ := httpGet(t, a.URL+"/nope"); code != 404 {
			t.Fatalf("GET /nope = %d", code)
		}
	})
	t.Run("healthz is 503 once the store is gone", func(t *testing.T) {
		if err := emb.Close(); err != nil {
			t.Fatal(err)
		}
		if code, _ := httpGet(t, a.URL+"/healthz"); code != 503 {
			t.Fatalf("GET /healthz = %d, want 503", code)
		}
	})
}
