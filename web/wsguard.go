package web

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/taskgraph/taskgraph/graph/codes"
)

// CloseDuplicateID is the close code of a WebSocket whose client started a
// second operation with the id of one still running (graphql-transport-ws:
// 4409 Subscriber for <id> already exists).
const CloseDuplicateID = 4409

// wsGuard is a WebSocket connection as gqlgen's transport sees it, with
// what the protocols require of the server that gqlgen leaves out, and
// nothing of the operation's rules (those are the pipeline's, the same for
// every transport):
//   - operation ids are unique while they run: on graphql-transport-ws a
//     duplicate closes the socket with 4409; the legacy graphql-ws protocol
//     defines no close code, so the duplicate alone gets an error;
//   - a subscribe's documentId goes to extensions.documentId
//     (liftDocumentID), where the trusted-documents step finds it, as for
//     a POST body.
type wsGuard struct {
	transport.WebsocketConn
	mu     sync.Mutex
	active map[string]bool // ids of operations started and not yet completed
}

func newWSGuard(c transport.WebsocketConn) *wsGuard {
	return &wsGuard{WebsocketConn: c, active: map[string]bool{}}
}

// wsEnvelope is the part of a protocol message the guard reads.
type wsEnvelope struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// NextReader returns the next client message to gqlgen, checked and with
// its documentId lifted; a duplicate id on graphql-transport-ws closes the
// connection (and returns transport.ErrWebsocketClosed).
func (g *wsGuard) NextReader() (int, io.Reader, error) {
	for {
		typ, r, err := g.WebsocketConn.NextReader()
		if err != nil {
			return typ, r, err
		}
		msg, err := io.ReadAll(r)
		if err != nil {
			return typ, nil, err
		}
		var env wsEnvelope
		if json.Unmarshal(msg, &env) != nil {
			return typ, bytes.NewReader(msg), nil // gqlgen answers malformed messages
		}
		switch env.Type {
		case "subscribe", "start":
			g.mu.Lock()
			dup := g.active[env.ID]
			g.active[env.ID] = true
			g.mu.Unlock()
			if dup {
				if g.Subprotocol() == "graphql-transport-ws" {
					_ = g.WebsocketConn.WriteClose(CloseDuplicateID, "Subscriber for "+truncate(env.ID, 90)+" already exists")
					_ = g.WebsocketConn.Close()
					return 0, nil, transport.ErrWebsocketClosed
				}
				_ = g.WebsocketConn.WriteJSON(map[string]any{"type": "error", "id": env.ID,
					"payload": map[string]any{"message": "an operation with this id is running",
						"extensions": map[string]any{"code": codes.BadRequest}}})
				continue
			}
			if p, err := liftDocumentID(env.Payload); err == nil && !bytes.Equal(p, env.Payload) {
				msg = rewritePayload(msg, p)
			}
		case "complete", "stop":
			g.mu.Lock()
			delete(g.active, env.ID)
			g.mu.Unlock()
		}
		return typ, bytes.NewReader(msg), nil
	}
}

// WriteJSON sends a server message, noting the operations it ends.
func (g *wsGuard) WriteJSON(v any) error {
	if typ, id, ok := messageHeader(v); ok && (typ == "complete" || typ == "error") {
		g.mu.Lock()
		delete(g.active, id)
		g.mu.Unlock()
	}
	return g.WebsocketConn.WriteJSON(v)
}

// messageHeader reads the type and id of a message gqlgen sends: a struct
// (or a pointer to one) with string-kinded Type and ID fields, read
// without marshalling its payload a second time.
func messageHeader(v any) (typ, id string, ok bool) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.Kind() != reflect.Struct {
		return "", "", false
	}
	t, i := rv.FieldByName("Type"), rv.FieldByName("ID")
	if !t.IsValid() || !i.IsValid() || t.Kind() != reflect.String || i.Kind() != reflect.String {
		return "", "", false
	}
	return t.String(), i.String(), true
}

// SetReadLimit and SetReadDeadline pass gqlgen's optional interfaces on.
func (g *wsGuard) SetReadLimit(n int64) {
	if l, ok := g.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(n)
	}
}

func (g *wsGuard) SetReadDeadline(t time.Time) error {
	if d, ok := g.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// rewritePayload returns msg with its payload replaced.
func rewritePayload(msg []byte, payload []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	m["payload"] = payload
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
