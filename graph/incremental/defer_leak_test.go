package incremental_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/coder/websocket"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// deferLeakOps is how many operations with @defer each way of leaving
// abandons or cancels, per protocol.
const deferLeakOps = 24

// TestDeferHoldsNoGoroutine abandons and cancels hundreds of operations
// with @defer, every way a client can leave, on every protocol that
// delivers their parts, and finds the goroutine count back at its
// baseline: no part of an operation outlives it.
//
// Each deferred fragment's read (the projects' tasks) is held until the
// operation's DynamoDB calls are cancelled, so every fragment finishes
// after its client has left, while the transport waits for its part: the
// moment gqlgen's own executor lost a deferred result (its send gave up
// on the cancelled context while Exec's receive waited on without one).
func TestDeferHoldsNoGoroutine(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	// The table's idle connections are closed before each count (they are
	// the HTTP client's, not an operation's).
	tr := &http.Transport{MaxIdleConnsPerHost: client.MaxConnsPerHost}
	store := dynamo.New(e.Emb.Client(client.Options(func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: tr} },
		holdDeferredReads)...), e.Store.Table())
	store.Now, store.Log = e.Store.Now, slog.New(slog.NewTextHandler(io.Discard, nil))
	e.Store = store
	lb := &testenv.LogBuffer{}
	// The operations' deadline is not what this test is about: long enough
	// for the slowest machine.
	e.StartLive(t, pipeline.Options{Deps: pipeline.Deps{Log: slog.New(slog.NewTextHandler(lb, nil))}, Limits: pipeline.Limits{Timeout: 10 * time.Minute}}, live.HubConfig{})
	// A server of its own, whose Close does not wait for its handlers
	// (httptest's would wait for ever for one that leaked).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: e.Handler}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	base, hc := "http://"+ln.Addr().String(), &http.Client{Transport: &http.Transport{}}
	token := e.Token(t, "alice")

	ways := deferLeavers(t, base, hc, token)
	run := func(n int) {
		var wg sync.WaitGroup
		for _, w := range ways {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.leave(n)
			}()
		}
		wg.Wait()
	}
	settle := func() {
		tr.CloseIdleConnections()
		hc.CloseIdleConnections()
	}
	// The pooled readers (client.Go) kept at their most, so that the pool's
	// size does not move the count; then every way once, then the baseline.
	fillReaderPool()
	run(2)
	baseline := settledGoroutines(settle)
	t.Logf("baseline: %d goroutines", baseline)

	run(deferLeakOps)
	total := deferLeakOps * len(ways)
	n, ok := goroutinesBackTo(baseline, 2*time.Minute, settle)
	t.Logf("%d operations with @defer abandoned or cancelled; %d goroutines after them, baseline %d", total, n, baseline)
	if !ok {
		t.Errorf("%d goroutines after %d abandoned operations with @defer, baseline %d; what is left:\n%s",
			n, total, baseline, projectGoroutines())
	}
	if strings.Contains(lb.String(), "level=ERROR") {
		t.Errorf("a client that leaves is logged as an error:\n%s", firstLines(lb.String(), "level=ERROR", 5))
	}
}

// holdDeferredReads is a client option that holds every DynamoDB call made
// for a Project.tasks field, or below one, until the call is cancelled.
func holdDeferredReads(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("holdDeferred",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
					if fc.Field.Field != nil && fc.Field.Name == "tasks" {
						<-ctx.Done()
						return middleware.InitializeOutput{}, middleware.Metadata{}, ctx.Err()
					}
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
}

// deferLeaver is one way of leaving an operation with @defer: leave(n)
// does it n times.
type deferLeaver struct {
	name  string
	leave func(n int)
}

// deferLeavers are the ways a client leaves an operation with @defer:
// over multipart/mixed and SSE it goes away before reading, in the middle
// of the first part, or after it; over each WebSocket protocol it cancels
// the operation at once or after its first part (complete, or the legacy
// stop), or closes the socket.
func deferLeavers(t *testing.T, base string, hc *http.Client, token string) []deferLeaver {
	t.Helper()
	post := func(accept string, read func(t *testing.T, resp *http.Response)) func(n int) {
		return func(n int) {
			for range n {
				ctx, cancel := context.WithCancel(context.Background())
				raw, err := testenv.Post(map[string]any{"query": testenv.DeferDashboard}, testenv.To(base+"/query"), testenv.HTTPClient(hc),
					testenv.Accept(accept), testenv.Bearer(token), testenv.Context(ctx), testenv.Stream())
				if err != nil {
					cancel()
					t.Error(err)
					return
				}
				resp := raw.Response
				if resp.StatusCode != http.StatusOK {
					t.Errorf("HTTP %d", resp.StatusCode)
				}
				if read != nil {
					read(t, resp)
				}
				cancel()
				resp.Body.Close()
			}
		}
	}
	midPart := func(t *testing.T, resp *http.Response) {
		if _, err := io.ReadFull(resp.Body, make([]byte, 8)); err != nil {
			t.Error(err)
		}
	}
	firstPart := func(t *testing.T, resp *http.Response) {
		_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		p, err := multipart.NewReader(resp.Body, params["boundary"]).NextPart()
		if err == nil {
			_, err = io.ReadAll(p)
		}
		if err != nil {
			t.Errorf("reading the first part: %v", err)
		}
	}
	firstEvent := func(t *testing.T, resp *http.Response) {
		sse := testenv.NewSSEReader(resp.Body)
		if _, ok := sse.Next(); !ok {
			t.Errorf("reading the first event: %v", sse.Err())
		}
	}
	ws := func(protocol, start, result, cancel string, closeSocket, waitFirst bool) func(n int) {
		return func(n int) {
			dial := func() *testenv.WSClient {
				c, err := testenv.DialWSURL(t, base, testenv.WSProtocol(protocol), testenv.WSAuth("Bearer "+token))
				if err != nil {
					t.Error(err)
				}
				return c
			}
			// send writes a message (testenv's Send would fail the test
			// from this goroutine).
			send := func(c *testenv.WSClient, m testenv.WSMessage) bool {
				b, _ := json.Marshal(m)
				if err := c.Conn.Write(context.Background(), websocket.MessageText, b); err != nil {
					t.Errorf("writing %s: %v", m.Type, err)
					return false
				}
				return true
			}
			c := dial()
			if c == nil {
				return
			}
			defer func() { _ = c.Conn.CloseNow() }()
			params, _ := json.Marshal(map[string]any{"query": testenv.DeferDashboard})
			for i := range n {
				id := fmt.Sprint(i + 1)
				if !send(c, testenv.WSMessage{ID: id, Type: start, Payload: params}) {
					return
				}
				if waitFirst && !readUntil(t, c, id, result) {
					return
				}
				if closeSocket {
					_ = c.Conn.CloseNow()
					if c = dial(); c == nil {
						return
					}
					continue
				}
				if !send(c, testenv.WSMessage{ID: id, Type: cancel}) {
					return
				}
			}
		}
	}
	multipartAccept := "multipart/mixed;deferSpec=20220824, application/json"
	return []deferLeaver{
		{"multipart: gone before reading", post(multipartAccept, nil)},
		{"multipart: gone in the first part", post(multipartAccept, midPart)},
		{"multipart: gone after the first part", post(multipartAccept, firstPart)},
		{"SSE: gone before reading", post("text/event-stream", nil)},
		{"SSE: gone in the first event", post("text/event-stream", midPart)},
		{"SSE: gone after the first event", post("text/event-stream", firstEvent)},
		{"graphql-transport-ws: complete at once", ws("graphql-transport-ws", "subscribe", "next", "complete", false, false)},
		{"graphql-transport-ws: complete after the first part", ws("graphql-transport-ws", "subscribe", "next", "complete", false, true)},
		{"graphql-transport-ws: socket closed after the first part", ws("graphql-transport-ws", "subscribe", "next", "", true, true)},
		{"graphql-ws: stop at once", ws("graphql-ws", "start", "data", "stop", false, false)},
		{"graphql-ws: stop after the first part", ws("graphql-ws", "start", "data", "stop", false, true)},
		{"graphql-ws: socket closed after the first part", ws("graphql-ws", "start", "data", "", true, true)},
	}
}

// readUntil reads c's messages until one of type typ for operation id,
// within a generous deadline (a failure guard, never a pace).
func readUntil(t *testing.T, c *testenv.WSClient, id, typ string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		m, err := c.Read(ctx)
		if err != nil {
			t.Errorf("reading the first part of %s: %v", id, err)
			return false
		}
		if m.ID == id && m.Type == typ {
			return true
		}
	}
}

// fillReaderPool starts as many pooled readers (client.Go) as the pool
// keeps idle, and more, and lets them go idle: the pool then stays at its
// largest whatever runs later.
func fillReaderPool() {
	var started, release sync.WaitGroup
	release.Add(1)
	for range client.MaxConnsPerHost + 16 {
		started.Add(1)
		client.Go(func() { started.Done(); release.Wait() })
	}
	started.Wait()
	release.Done()
}

// settledGoroutines returns the goroutine count once it has stopped
// falling: the lowest seen, held for ten looks in a row (settle closes
// idle connections before each look).
func settledGoroutines(settle func()) int {
	settle()
	n, held := runtime.NumGoroutine(), 0
	for range 500 {
		time.Sleep(20 * time.Millisecond)
		settle()
		if m := runtime.NumGoroutine(); m < n {
			n, held = m, 0
		} else if held++; held == 10 {
			break
		}
	}
	return n
}

// goroutinesBackTo waits, at most patience, for the goroutine count to be
// at most base; it returns the last count and whether it got there.
func goroutinesBackTo(base int, patience time.Duration, settle func()) (int, bool) {
	deadline := time.Now().Add(patience)
	for {
		settle()
		n := runtime.NumGoroutine()
		if n <= base {
			return n, true
		}
		if time.Now().After(deadline) {
			return n, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// projectGoroutines is the goroutine profile's stacks that run gqlgen's or
// this project's code, with their counts.
func projectGoroutines() string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	var out []string
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, "99designs/gqlgen") || strings.Contains(g, "taskgraph/graph") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// firstLines returns at most n lines of s that contain sub.
func firstLines(s, sub string, n int) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) && len(out) < n {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
