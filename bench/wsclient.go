package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"
)

// A Subscription is one graphql-transport-ws connection with one running
// subscription: the protocol the graphql-ws npm client speaks, here in Go
// so that thousands of subscribers fit in one process.
type Subscription struct {
	conn *websocket.Conn
}

// Subscribe dials the WebSocket of the /query URL (http: or https:),
// authenticates with the token in connection_init, waits for the server's
// acknowledgement and starts the subscription query with vars. Each event's
// payload (the "next" message's {data, errors}) goes to onNext, from the
// connection's reading goroutine; the subscription's end or error goes to
// onEnd (nil: it completed).
func Subscribe(ctx context.Context, url, token, query string, vars map[string]any, onNext func(json.RawMessage), onEnd func(error)) (*Subscription, error) {
	ws := "ws" + strings.TrimPrefix(url, "http")
	conn, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"},
		HTTPHeader: http.Header{}})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(1 << 20)
	send := func(m any) error {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		return conn.Write(ctx, websocket.MessageText, b)
	}
	fail := func(err error) (*Subscription, error) {
		conn.CloseNow()
		return nil, err
	}
	if err := send(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + token}}); err != nil {
		return fail(err)
	}
	var m wsMessage
	for {
		if err := readMessage(ctx, conn, &m); err != nil {
			return fail(fmt.Errorf("waiting for connection_ack: %w", err))
		}
		if m.Type == "connection_ack" {
			break
		}
		if m.Type != "ping" && m.Type != "pong" {
			return fail(fmt.Errorf("waiting for connection_ack, got %q", m.Type))
		}
	}
	if err := send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}}); err != nil {
		return fail(err)
	}
	go func() {
		ctx := context.Background()
		for {
			var m wsMessage
			if err := readMessage(ctx, conn, &m); err != nil {
				onEnd(err)
				return
			}
			switch m.Type {
			case "next":
				onNext(m.Payload)
			case "ping":
				_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"pong"}`))
			case "error":
				onEnd(fmt.Errorf("error: %s", m.Payload))
				conn.CloseNow()
				return
			case "complete":
				onEnd(nil)
				conn.CloseNow()
				return
			}
		}
	}()
	return &Subscription{conn: conn}, nil
}

// Close ends the connection.
func (s *Subscription) Close() { s.conn.CloseNow() }

type wsMessage struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

func readMessage(ctx context.Context, conn *websocket.Conn, m *wsMessage) error {
	_, b, err := conn.Read(ctx)
	if err != nil {
		return err
	}
	*m = wsMessage{}
	if err := json.Unmarshal(b, m); err != nil {
		return errors.New("a message that is not JSON")
	}
	return nil
}
