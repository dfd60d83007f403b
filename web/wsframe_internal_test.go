package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
)

func TestAMessageIDIsQuotedAsEncodingJSONQuotesIt(t *testing.T) {
	for _, id := range []string{"1", "a-b_c.d", "550e8400-e29b-41d4-a716-446655440000", `quo"te`, `back\slash`,
		"<script>", "a&b", "tab\there", "new\nline", "é", "\u2028", "\x00", strings.Repeat("x", 300)} {
		want, _ := json.Marshal(id)
		if got := appendJSONString([]byte("prefix"), id); string(got) != "prefix"+string(want) {
			t.Errorf("%q: got %s, want %s", id, got[len("prefix"):], want)
		}
	}
}

// readFrame reads one server frame (unmasked) and returns its payload.
func readFrame(t *testing.T, r io.Reader) []byte {
	t.Helper()
	h, err := ws.ReadHeader(r)
	if err != nil {
		t.Fatalf("reading a frame's header: %v", err)
	}
	if !h.Fin || h.OpCode != ws.OpText || h.Masked {
		t.Fatalf("header %+v, want a final unmasked text frame", h)
	}
	p := make([]byte, h.Length)
	if _, err := io.ReadFull(r, p); err != nil {
		t.Fatalf("reading a frame's payload: %v", err)
	}
	return p
}

func TestAMessageFrameHoldsItsMessageAtEveryLengthOfHeader(t *testing.T) {
	buf := make([]byte, 0, 16) // reused, grown as needed
	for _, n := range []int{0, 10, 125 - 30, 125, 126, 200, 0xffff - 30, 0xffff, 0x10000, 70000} {
		payload := []byte(`"` + strings.Repeat("p", n) + `"`)
		b, f := appendMessage(buf, "next", "op-1", payload)
		buf = b
		got := readFrame(t, bytes.NewReader(f))
		want := `{"type":"next","id":"op-1","payload":` + string(payload) + `}`
		if string(got) != want {
			t.Fatalf("payload of %d bytes: the frame holds %d bytes, want %d", n, len(got), len(want))
		}
		var m wsEnvelope
		if err := json.Unmarshal(got, &m); err != nil || m.Type != "next" || m.ID != "op-1" {
			t.Fatalf("payload of %d bytes: %v, %+v", n, err, m)
		}
	}
}

// The frames of events are built in one reused buffer: what a socket does
// not take at once must be copied before the buffer is built again.
func TestFramesTheSocketTakesInPartArriveWholeAndInOrder(t *testing.T) {
	server, client := tcpPair(t)
	_ = server.(*net.TCPConn).SetWriteBuffer(4096)
	c := &wsConn{wire: wire{nc: server, limit: 1 << 20}}
	defer c.wire.close()
	const n = 400 // about 400 KiB: more than the socket's buffers take before the client reads
	payload := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat(fmt.Sprint(i%10), 1000)))
	}
	for i := range n {
		if !c.sendMessage("next", "op", payload(i), false) {
			t.Fatalf("message %d was refused", i)
		}
	}
	c.wire.mu.Lock()
	queued := len(c.wire.backlog) > 0 || c.wire.flushing
	c.wire.mu.Unlock()
	if !queued {
		t.Fatal("the socket took every message at once: the test proves nothing (make n larger)")
	}
	_ = client.SetReadDeadline(time.Now().Add(30 * time.Second))
	for i := range n {
		want := `{"type":"next","id":"op","payload":` + string(payload(i)) + `}`
		if got := readFrame(t, client); string(got) != want {
			t.Fatalf("message %d arrived as %.80s…, want %.80s…", i, got, want)
		}
	}
}

// tcpPair returns the two ends of a loopback TCP connection, closed when
// the test ends.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server = <-accepted
	if server == nil {
		t.Fatal("no connection accepted")
	}
	t.Cleanup(func() { server.Close() })
	return server, client
}

// A backlog's write waits at most stallTimeout on a client that takes
// nothing; once a backlog is written out, later writes take no deadline.
func TestABacklogWaitsOnAStalledClientOnlySoLong(t *testing.T) {
	defer func(d time.Duration) { stallTimeout = d }(stallTimeout)
	stallTimeout = 300 * time.Millisecond
	fill := func(c *wsConn) {
		t.Helper()
		for i := 0; ; i++ {
			c.sendMessage("next", "op", []byte(`"`+strings.Repeat("x", 1000)+`"`), true)
			c.wire.mu.Lock()
			queued := len(c.wire.backlog) > 0 || c.wire.flushing
			c.wire.mu.Unlock()
			if queued {
				return
			}
			if i > 100000 {
				t.Fatal("the socket never filled")
			}
		}
	}
	closed := func(c *wsConn) bool {
		c.wire.mu.Lock()
		defer c.wire.mu.Unlock()
		return c.wire.closed
	}

	server, _ := tcpPair(t) // a client that reads nothing
	stalled := &wsConn{wire: wire{nc: server, limit: 1 << 20}}
	fill(stalled)
	deadline := time.Now().Add(10 * time.Second)
	for !closed(stalled) {
		if time.Now().After(deadline) {
			t.Fatal("the stalled client's connection is still open")
		}
		time.Sleep(10 * time.Millisecond)
	}

	server, client := tcpPair(t) // a client that reads, late
	c := &wsConn{wire: wire{nc: server, limit: 1 << 20}}
	fill(c)
	go func() { _, _ = io.Copy(io.Discard, client) }()
	for {
		c.wire.mu.Lock()
		drained := len(c.wire.backlog) == 0 && !c.wire.flushing
		c.wire.mu.Unlock()
		if drained || closed(c) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(2 * stallTimeout) // past the backlog's deadline
	if !c.sendMessage("next", "op", []byte(`{}`), false) || closed(c) {
		t.Fatal("a client that took its backlog was dropped")
	}
}
