package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gobwas/ws"
)

// wsConn is one WebSocket connection: its reader (serve, the one goroutine
// it holds while the client sends; none while it is quiet: parked, see
// park_linux.go), its operations by id, its writing side (wire), and its
// place in the keep-alive wheel. The frames are RFC 6455's, read and
// checked with gobwas/ws (no buffer: the connection reads its frame
// headers straight off the socket and allocates a message only for the
// time it is handled).
type wsConn struct {
	t       liveWebsocket
	exec    graphql.GraphExecutor
	proto   string
	ctx     context.Context // the upgrade request's; then the authenticated viewer's
	headers http.Header
	src     io.Reader // the socket, after what the upgrade had read ahead
	wire    wire

	closedStream func() // the connection's metric
	unkeep       func() // out of the keep-alive wheel

	mu      sync.Mutex
	ops     map[string]*wsOp
	acked   bool
	unpong  int      // pings sent since the last pong
	closing bool     // a close frame is sent or queued
	parked  parkSlot // its parking while parked (no reader runs)
}

// errTooBig ends a connection whose message is over -max-body.
var errTooBig = errors.New("message too big")

// serve reads the client's messages until the connection ends, then ends
// its operations. Once the connection is acknowledged, it parks it
// whenever the client has nothing more to read, and returns: the parking
// runs serve again when the client sends or leaves (park_linux.go).
func (c *wsConn) serve() {
	for {
		msg, err := c.readMessage()
		var ne net.Error
		switch {
		case errors.Is(err, errTooBig):
			c.closeWith(int(ws.StatusMessageTooBig), "message too big")
			continue // read on until the client answers the close
		case err != nil && !c.acked && errors.As(err, &ne) && ne.Timeout():
			c.closeWith(closeInitTimeout, "Connection initialisation timeout")
			c.shutdown()
			return
		case err != nil:
			c.shutdown()
			return
		}
		if c.isClosing() {
			continue // after a close: only the client's close is awaited
		}
		if !parking.available() {
			c.handleApart(msg)
			continue
		}
		c.handle(msg)
		if c.park() {
			return
		}
	}
}

// park parks the connection, unless it is not acknowledged yet (its
// reader waits for connection_init, within initTimeout), closing (the
// reader waits for the client's close, within closeGrace), or has bytes
// read ahead; true: the reader must stop (resumed, another runs).
func (c *wsConn) park() bool {
	if !parking.available() {
		return false
	}
	c.mu.Lock()
	if !c.acked || c.closing || c.parked.id != 0 {
		c.mu.Unlock()
		return false
	}
	if pr, ok := c.src.(*preRead); ok && len(pr.pre) > 0 {
		c.mu.Unlock()
		return false
	}
	id := c.parked.reserve(&c.mu, c.serve)
	c.mu.Unlock()
	return parking.arm(c.wire.nc, id)
}

// wake resumes a parked connection's reader (the server closes it: the
// reader must see its end).
func (c *wsConn) wake() { c.parked.wake(&c.mu, c.serve) }

// handleApart handles msg on a goroutine of its own and waits for it: the
// reader's stack stays at its least (2 KiB) for the connection's life,
// while handling a message (authentication, JSON) may take more.
func (c *wsConn) handleApart(msg []byte) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.handle(msg)
	}()
	<-done
}

// readMessage returns the next data message, answering the control frames
// that come before it.
func (c *wsConn) readMessage() ([]byte, error) {
	var msg []byte
	for {
		h, err := ws.ReadHeader(c.src)
		if err != nil {
			return nil, err
		}
		if h.OpCode.IsControl() {
			if h.Length > 125 || !h.Fin {
				return nil, ws.ErrProtocolControlPayloadOverflow
			}
			p := make([]byte, h.Length)
			if _, err := io.ReadFull(c.src, p); err != nil {
				return nil, err
			}
			ws.Cipher(p, h.Mask, 0)
			switch h.OpCode {
			case ws.OpPing:
				c.wire.send(frame(ws.OpPong, p), true)
			case ws.OpClose: // answered with the same code; then the connection ends
				code, _ := ws.ParseCloseFrameData(p)
				c.closeWith(int(code), "")
				return nil, io.EOF
			}
			continue
		}
		if int64(len(msg))+h.Length > c.t.maxMessage {
			if _, err := io.CopyN(io.Discard, c.src, h.Length); err != nil {
				return nil, err
			}
			return nil, errTooBig
		}
		start := len(msg)
		msg = append(msg, make([]byte, h.Length)...)
		if _, err := io.ReadFull(c.src, msg[start:]); err != nil {
			return nil, err
		}
		ws.Cipher(msg[start:], h.Mask, 0)
		if h.Fin {
			return msg, nil
		}
	}
}

// wsEnvelope is a protocol message as the connection reads it.
type wsEnvelope struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// handle acts on one client message.
func (c *wsConn) handle(msg []byte) {
	var m wsEnvelope
	legacy := c.proto == subprotocolGraphQLWS
	if json.Unmarshal(msg, &m) != nil {
		c.protocolError("Invalid message received")
		return
	}
	c.mu.Lock()
	acked := c.acked
	c.mu.Unlock()
	switch m.Type {
	case "connection_init":
		if acked {
			if !legacy {
				c.closeWith(closeTooManyInits, "Too many initialisation requests")
			}
			return
		}
		c.init(m.Payload)
	case "subscribe", "start":
		if (m.Type == "start") != legacy {
			c.protocolError("Invalid message received")
			return
		}
		if !acked {
			if !legacy {
				c.closeWith(closeUnauthorized, "Unauthorized")
			}
			return
		}
		c.start(m.ID, m.Payload)
	case "complete", "stop":
		c.stopOp(m.ID)
	case "ping":
		c.write("pong", "", m.Payload)
	case "pong":
		c.mu.Lock()
		c.unpong = 0
		c.mu.Unlock()
	case "connection_terminate":
		c.closeWith(int(ws.StatusNormalClosure), "terminated")
	default:
		c.protocolError("Invalid message received")
	}
}

// protocolError refuses a message the protocol does not know: the close
// 4400 on graphql-transport-ws, a connection_error on the legacy protocol.
func (c *wsConn) protocolError(reason string) {
	if c.proto == subprotocolGraphQLWS {
		b, _ := json.Marshal(map[string]string{"message": reason})
		c.write("connection_error", "", b)
		return
	}
	c.closeWith(closeBadRequest, reason)
}

// init authenticates the connection (wsInit) and acknowledges it; a
// missing or bad token refuses it with the close 4403 Forbidden that
// graphql-transport-ws prescribes (a normal closure would make the
// graphql-ws client reconnect at once, without end).
func (c *wsConn) init(payload json.RawMessage) {
	ctx, err := wsInit(c.ctx, c.t.auth, payload)
	if err != nil {
		b, _ := json.Marshal(map[string]string{"message": err.Error()})
		if c.proto == subprotocolGraphQLWS {
			c.write("connection_error", "", b)
		}
		c.closeWith(CloseForbidden, "Forbidden")
		return
	}
	c.mu.Lock()
	c.ctx, c.acked = ctx, true
	c.mu.Unlock()
	_ = c.wire.nc.SetReadDeadline(time.Time{})
	c.write("connection_ack", "", nil)
	if c.proto == subprotocolGraphQLWS {
		c.write("ka", "", nil)
	}
	c.unkeep = c.t.keep.add(c)
}

// keepAlive sends graphql-transport-ws's ping (a client that answered
// none of the last two is dropped, its subscriptions with it) or the
// legacy protocol's ka. A graphql-transport-ws connection that was sent
// an event since its last keep-alive is not pinged: it is not idle (for
// a proxy), and a client gone meanwhile is found by the writes (a full
// backlog ends it); a ping per interval to thousands of busy sockets is
// a write and a read each for nothing. The legacy protocol's clients
// close a connection that misses its ka, whatever else comes.
func (c *wsConn) keepAlive(time.Time) {
	if c.proto == subprotocolGraphQLWS {
		c.write("ka", "", nil)
		return
	}
	if c.wire.busy() {
		return
	}
	c.mu.Lock()
	c.unpong++
	dead := c.unpong > 2
	c.mu.Unlock()
	if dead {
		c.wire.close()
		return
	}
	c.write("ping", "", nil)
	c.wire.busy() // the ping is not the client's traffic
}

// write sends one protocol message (always: it never counts as falling
// behind).
func (c *wsConn) write(typ, id string, payload []byte) {
	c.sendMessage(typ, id, payload, true)
}

// closeWith sends the close frame with code and reason, after what the
// connection has sent already, and half-closes the socket once it is out;
// the reader then waits (closeGrace at most) for the client's end.
func (c *wsConn) closeWith(code int, reason string) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	c.mu.Unlock()
	body := ws.NewCloseFrameBody(ws.StatusCode(code), reason)
	c.wire.last(frame(ws.OpClose, body), func() {
		if tc, ok := c.wire.nc.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
		_ = c.wire.nc.SetReadDeadline(time.Now().Add(closeGrace))
	})
	_ = c.wire.nc.SetReadDeadline(time.Now().Add(closeGrace))
	c.wake() // its reader awaits the client's close
}

func (c *wsConn) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// CloseWith closes the connection with code and reason (a subscriber fell
// behind: 1013) and reports whether it could.
func (c *wsConn) CloseWith(code int, reason string) bool {
	c.closeWith(code, reason)
	return true
}

// shutdown ends the connection's operations and the connection.
func (c *wsConn) shutdown() {
	c.mu.Lock()
	ops := c.ops
	c.ops = map[string]*wsOp{}
	c.closing = true
	c.mu.Unlock()
	for _, op := range ops {
		op.abandon()
	}
	if c.unkeep != nil {
		c.unkeep()
	}
	c.wire.close()
	c.closedStream()
}

// preRead is a socket with the bytes its upgrade read ahead of it.
type preRead struct {
	pre []byte
	net.Conn
}

func (p *preRead) Read(b []byte) (int, error) {
	if len(p.pre) > 0 {
		n := copy(b, p.pre)
		p.pre = p.pre[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}
