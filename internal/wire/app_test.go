package wire_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/internal/wire"
)

func TestAnAppClosesGracefully(t *testing.T) {
	e := testenv.New(t)
	inFlight, release := make(chan struct{}), make(chan struct{})
	app := &wire.App{Store: e.Store, Auth: e.Auth, Grace: 5 * time.Second,
		Routes: func(query http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/query", query)
			mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
				close(inFlight)
				<-release
				_, _ = w.Write([]byte("finished"))
			})
			return mux
		}}
	if err := app.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if app.LiveHub == nil || app.Broker == nil || app.Handler == nil || !strings.HasPrefix(app.URL, "http://127.0.0.1:") {
		t.Fatalf("after Open: hub %v, broker %v, handler %v, URL %q", app.LiveHub, app.Broker, app.Handler, app.URL)
	}
	res, err := http.Post(app.URL+"/query", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"__typename":"Query"`) {
		t.Fatalf("/query answered %d %s", res.StatusCode, body)
	}

	got := make(chan string, 1)
	go func() {
		res, err := http.Get(app.URL + "/slow")
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		got <- string(b)
	}()
	<-inFlight
	closed := make(chan error, 1)
	go func() { closed <- app.Close() }() // shutdown begins while a request is in flight
	addr := strings.TrimPrefix(app.URL, "http://")
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break // new connections are refused
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("new connections were still accepted 10 s into the shutdown")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	if b := <-got; b != "finished" {
		t.Fatalf("the request in flight got %q, want it finished", b)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}
