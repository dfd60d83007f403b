package app

import (
	"context"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
)

func mustStore(tb testing.TB, emb *embedded.Store) *dynamo.Store {
	tb.Helper()
	s := dynamo.New(emb.Client(func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }), "task-manager")
	s.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := s.EnsureTable(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestMux(t *testing.T) {
	emb, err := embedded.Start()
	if err != nil {
		t.Fatal(err)
	}
	store := mustStore(t, emb)
	if err := store.Import(context.Background(), store.Demo(time.Now())); err != nil {
		t.Fatal(err)
	}
	authn := &auth.Authenticator{Secret: []byte("s")}
	tok, err := authn.Sign("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newMux(graph.Options{Deps: graph.Deps{Store: store, Auth: authn, Log: store.Log}}, map[string]string{"Authorization": "Bearer " + tok}))
	defer srv.Close()

	get := func(t *testing.T, path string) (int, string) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	t.Run("the IDE at / has the demo token filled in", func(t *testing.T) {
		code, body := get(t, "/")
		if code != 200 || !strings.Contains(body, "graphiql") || !strings.Contains(body, tok) {
			t.Fatalf("GET / = %d, graphiql page with token: %v", code, strings.Contains(body, tok))
		}
	})
	t.Run("POST /query answers the demo user", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/query", strings.NewReader(`{"query":"{ me { name } }"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if !strings.Contains(string(b), `"name":"Alice Example"`) {
			t.Fatalf("got %s", b)
		}
	})
	t.Run("healthz is 200 while the table is reachable", func(t *testing.T) {
		if code, _ := get(t, "/healthz"); code != 200 {
			t.Fatalf("GET /healthz = %d", code)
		}
	})
	t.Run("an unknown path is 404", func(t *testing.T) {
		if code, _ := get(t, "/nope"); code != 404 {
			t.Fatalf("GET /nope = %d", code)
		}
	})
	t.Run("healthz is 503 once the store is gone", func(t *testing.T) {
		if err := emb.Close(); err != nil {
			t.Fatal(err)
		}
		if code, _ := get(t, "/healthz"); code != 503 {
			t.Fatalf("GET /healthz = %d, want 503", code)
		}
	})
}

func TestSettingsChooseTheStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no AWS configuration: embedded", nil, "embedded"},
		{"an endpoint: aws", map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1"}, "aws"},
		{"a region: aws", map[string]string{"AWS_REGION": "eu-west-1"}, "aws"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID"} {
				t.Setenv(v, tc.env[v])
			}
			s, err := loadSettings(nil, ReadEnv(), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.store; got != tc.want {
				t.Fatalf("store = %q, want %q", got, tc.want)
			}
		})
	}
}
