package app_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// Close shuts the server down gracefully: new connections are refused at
// once, a request in flight (its read held by a gate) finishes and gets
// its answer, and Close returns once it has.
func TestAnAppClosesGracefully(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	gate := &loaders.ReadGate{}
	a := &app.App{Store: e.Store, Auth: e.Auth, Hooks: app.Hooks{Graph: pipeline.Hooks{Loaders: loaders.Config{Gate: gate}}}}
	if err := a.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a.Hub == nil || a.Broker == nil || a.Handler == nil || !strings.HasPrefix(a.URL, "http://127.0.0.1:") {
		t.Fatalf("after Open: hub %v, broker %v, handler %v, URL %q", a.Hub, a.Broker, a.Handler, a.URL)
	}

	type answer struct {
		res *testenv.Response
		err error
	}
	got, token := make(chan answer, 1), e.Token(t, "alice")
	go func() {
		res, err := testenv.PostURL(a.URL+"/query", "Bearer "+token, `{ me { name } }`, nil)
		got <- answer{res, err}
	}()
	for deadline := time.Now().Add(30 * time.Second); gate.Pending() == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request's read never reached the gate")
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }() // shutdown begins while a request is in flight
	addr := strings.TrimPrefix(a.URL, "http://")
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
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a request was in flight", err)
	default:
	}
	gate.Open()
	if r := <-got; r.err != nil || len(r.res.Errors) > 0 || !strings.Contains(string(r.res.Data), "Alice Example") {
		t.Fatalf("the request in flight got %+v, %v; want it finished with alice's name", r.res, r.err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}
