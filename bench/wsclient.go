package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"

	"github.com/gobwas/ws"
)

// A Subscription is one graphql-transport-ws connection with one running
// subscription: the protocol the graphql-ws npm client speaks, here in Go
// so that thousands of subscribers fit in one process. It holds one
// goroutine, reading the socket through a small buffer: the subscribers
// share the machine's cores with the servers they measure, so what each
// received event costs them is kept to a wake-up, a read, and what its
// onNext reads of the payload.
type Subscription struct {
	conn net.Conn
	mu   sync.Mutex // writes
}

// Subscribe dials the WebSocket of the /query URL (http: or https:),
// authenticates with the token in connection_init, waits for the server's
// acknowledgement and starts the subscription query with vars. Each event's
// payload (the "next" message's {data, errors}) goes to onNext, from the
// connection's reading goroutine; the subscription's end or error goes to
// onEnd (nil: it completed).
func Subscribe(ctx context.Context, url, token, query string, vars map[string]any, onNext func(json.RawMessage), onEnd func(error)) (*Subscription, error) {
	d := ws.Dialer{Protocols: []string{"graphql-transport-ws"}}
	conn, br, _, err := d.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"))
	if err != nil {
		return nil, err
	}
	var src io.Reader = bufio.NewReaderSize(conn, 512)
	if br != nil { // the server's first bytes came with the handshake
		src = br
	}
	s := &Subscription{conn: conn}
	fail := func(err error) (*Subscription, error) {
		_ = conn.Close()
		return nil, err
	}
	if err := s.send(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + token}}); err != nil {
		return fail(err)
	}
	var m wsMessage
	for {
		if err := s.read(src, &m); err != nil {
			return fail(fmt.Errorf("waiting for connection_ack: %w", err))
		}
		if m.Type == "connection_ack" {
			break
		}
		if m.Type != "ping" && m.Type != "pong" {
			return fail(fmt.Errorf("waiting for connection_ack, got %q", m.Type))
		}
	}
	if err := s.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}}); err != nil {
		return fail(err)
	}
	go func() {
		for {
			var m wsMessage
			if err := s.read(src, &m); err != nil {
				onEnd(err)
				return
			}
			switch m.Type {
			case "next":
				onNext(m.Payload)
			case "ping":
				_ = s.write([]byte(`{"type":"pong"}`))
			case "error":
				onEnd(fmt.Errorf("error: %s", m.Payload))
				s.Close()
				return
			case "complete":
				onEnd(nil)
				s.Close()
				return
			}
		}
	}()
	return s, nil
}

// Close ends the connection.
func (s *Subscription) Close() { _ = s.conn.Close() }

// nextPrefix is how the server's event messages to the one subscription
// start: the envelope of the hot path is taken apart without a JSON
// decoding (the payload is still decoded by whoever reads it).
var nextPrefix = []byte(`{"type":"next","id":"1","payload":`)

type wsMessage struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

func (s *Subscription) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.write(b)
}

// write sends one text message, masked as a client's must be.
func (s *Subscription) write(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ws.WriteFrame(s.conn, ws.MaskFrameInPlace(ws.NewTextFrame(b)))
}

// read reads the next data message into m, answering the control frames
// before it (a ping with a pong; a close ends it).
func (s *Subscription) read(src io.Reader, m *wsMessage) error {
	var msg []byte
	for {
		h, err := ws.ReadHeader(src)
		if err != nil {
			return err
		}
		if h.Length > 1<<20 {
			return errors.New("a message over 1 MiB")
		}
		p := make([]byte, h.Length)
		if _, err := io.ReadFull(src, p); err != nil {
			return err
		}
		if h.Masked {
			ws.Cipher(p, h.Mask, 0)
		}
		switch h.OpCode {
		case ws.OpPing:
			s.mu.Lock()
			err := ws.WriteFrame(s.conn, ws.MaskFrameInPlace(ws.NewPongFrame(p)))
			s.mu.Unlock()
			if err != nil {
				return err
			}
			continue
		case ws.OpPong:
			continue
		case ws.OpClose:
			code, reason := ws.ParseCloseFrameData(p)
			return fmt.Errorf("closed: %d %s", code, reason)
		}
		if msg == nil {
			msg = p
		} else {
			msg = append(msg, p...)
		}
		if !h.Fin {
			continue
		}
		*m = wsMessage{}
		if p, ok := bytes.CutPrefix(msg, nextPrefix); ok && len(p) > 0 && p[len(p)-1] == '}' {
			m.Type, m.ID, m.Payload = "next", "1", p[:len(p)-1]
			return nil
		}
		if err := json.Unmarshal(msg, m); err != nil {
			return errors.New("a message that is not JSON")
		}
		return nil
	}
}
