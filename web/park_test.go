//go:build linux

package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// rawWS is a graphql-transport-ws client with no goroutine of its own,
// so that the goroutines counted are the server's.
type rawWS struct {
	conn net.Conn
	r    io.Reader
}

func dialRaw(t *testing.T, url, token string) *rawWS {
	t.Helper()
	d := ws.Dialer{Protocols: []string{"graphql-transport-ws"}}
	conn, br, _, err := d.Dial(context.Background(), "ws"+strings.TrimPrefix(url, "http")+"/query")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c := &rawWS{conn: conn, r: conn}
	if br != nil {
		c.r = br
	}
	c.send(t, map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + token}})
	if m := c.read(t); m.Type != "connection_ack" {
		t.Fatalf("got %q, want connection_ack", m.Type)
	}
	return c
}

func (c *rawWS) send(t *testing.T, m any) {
	t.Helper()
	b, _ := json.Marshal(m)
	if err := ws.WriteFrame(c.conn, ws.MaskFrameInPlace(ws.NewTextFrame(b))); err != nil {
		t.Fatal(err)
	}
}

func (c *rawWS) read(t *testing.T) testenv.WSMessage {
	t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		h, err := ws.ReadHeader(c.r)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]byte, h.Length)
		if _, err := io.ReadFull(c.r, p); err != nil {
			t.Fatal(err)
		}
		if h.OpCode != ws.OpText {
			continue
		}
		var m testenv.WSMessage
		if err := json.Unmarshal(p, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
}

// goroutinesIn returns the goroutines running code of the given type
// (a WebSocket's reader, a stream's), once their count stops falling.
func goroutinesIn(typ string) int {
	count := func() int {
		buf := make([]byte, 8<<20)
		k := 0
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "taskgraph/web.(*"+typ+")") {
				k++
			}
		}
		return k
	}
	n := count()
	for range 25 {
		time.Sleep(20 * time.Millisecond)
		n = min(n, count())
	}
	return n
}

// A quiet WebSocket holds no goroutine: parked between the client's
// messages, it is resumed by what the client sends (a ping, a complete)
// and still gets every event.
func TestAQuietWebSocketHoldsNoGoroutine(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	site := seed.Project("Website relaunch")
	task := seed.TasksOf(site.ID)[0].ID
	token := e.Token(t, "bob")
	const n = 40
	clients := make([]*rawWS, n)
	for i := range clients {
		clients[i] = dialRaw(t, srv.URL, token)
		clients[i].send(t, map[string]any{"id": "s", "type": "subscribe",
			"payload": map[string]any{"query": taskEventsSub, "variables": map[string]any{"p": site.ID}}})
	}
	testenv.WaitSubscribers(t, lv.Hub, site.ID, n)
	if g := goroutinesIn("wsConn"); g != 0 {
		t.Fatalf("%d quiet WebSockets hold %d goroutines, want none", n, g)
	}

	e.MustQuery(t, "bob", `mutation($id: ID!) { updateTask(input: {id: $id, title: "parked"}) { id } }`, map[string]any{"id": task}, nil)
	for i, c := range clients {
		m := c.read(t)
		if m.Type != "next" || !strings.Contains(string(m.Payload), `"parked"`) {
			t.Fatalf("client %d got %s %s, want the event", i, m.Type, m.Payload)
		}
		c.send(t, map[string]any{"type": "ping"})
		if m := c.read(t); m.Type != "pong" {
			t.Fatalf("client %d got %q for its ping, want pong", i, m.Type)
		}
	}
	for _, c := range clients {
		c.send(t, map[string]any{"id": "s", "type": "complete"})
	}
	testenv.WaitSubscribers(t, lv.Hub, site.ID, 0)
	for _, c := range clients {
		_ = c.conn.Close()
	}
	if g := goroutinesIn("wsConn"); g != 0 {
		t.Fatalf("%d goroutines of WebSockets whose clients left, want none", g)
	}
}

// A server-sent-events stream holds no goroutine while its client
// listens, gets its events, and ends when its client leaves.
func TestAListeningEventStreamHoldsNoGoroutine(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	site := seed.Project("Website relaunch")
	task := seed.TasksOf(site.ID)[0].ID
	const n = 10
	var bodies []*bufio.Reader
	var closers []io.Closer
	for range n {
		res := testenv.MustOpenSSE(t, srv, "Bearer "+e.Token(t, "bob"), taskEventsSub, map[string]any{"p": site.ID})
		bodies, closers = append(bodies, bufio.NewReader(res.Body)), append(closers, res.Body)
	}
	testenv.WaitSubscribers(t, lv.Hub, site.ID, n)
	if g := goroutinesIn("sseStream"); g != 0 {
		t.Fatalf("%d listening streams hold %d goroutines, want none", n, g)
	}
	e.MustQuery(t, "bob", `mutation($id: ID!) { updateTask(input: {id: $id, title: "parked stream"}) { id } }`, map[string]any{"id": task}, nil)
	for i, b := range bodies {
		for {
			line, err := b.ReadString('\n')
			if err != nil {
				t.Fatalf("stream %d: %v before its event", i, err)
			}
			if strings.HasPrefix(line, "data:") && strings.Contains(line, `"parked stream"`) {
				break
			}
		}
	}
	for _, c := range closers {
		_ = c.Close() // the clients leave
	}
	testenv.WaitSubscribers(t, lv.Hub, site.ID, 0)
	if g := goroutinesIn("sseStream"); g != 0 {
		t.Fatalf("%d goroutines of streams whose clients left, want none", g)
	}
}
