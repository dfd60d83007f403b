package web

import (
	"encoding/binary"
	"encoding/json"
	"sync"

	"github.com/gobwas/ws"
)

// The frames a WebSocket connection writes. An event's frame is built in
// a buffer of the delivering goroutine's (framePool) and written from
// there: what the socket takes at once costs no allocation; only what it
// does not take is copied, into the connection's backlog.

// maxFrameHeader is the longest header of a server's frame (unmasked).
const maxFrameHeader = 10

// framePool holds the buffers events' frames are built in.
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledFrame is the largest buffer framePool keeps (a rare large
// event's is left to the collector).
const maxPooledFrame = 64 << 10

// appendMessage builds the frame of a protocol message in buf (from its
// start) and returns the buffer (to reuse) and the frame within it.
func appendMessage(buf []byte, typ, id string, payload []byte) (b, frame []byte) {
	b = append(buf[:0], make([]byte, maxFrameHeader)...)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, '"')
	if id != "" {
		b = append(b, `,"id":`...)
		b = appendJSONString(b, id)
	}
	if len(payload) > 0 {
		b = append(b, `,"payload":`...)
		b = append(b, payload...)
	}
	b = append(b, '}')
	return b, framed(ws.OpText, b)
}

// appendJSONString appends s as a JSON string, as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// sendMessage writes one protocol message on c's wire, built in a pooled
// buffer; false as wire.send.
func (c *wsConn) sendMessage(typ, id string, payload []byte, always bool) bool {
	bp := framePool.Get().(*[]byte)
	b, f := appendMessage(*bp, typ, id, payload)
	ok := c.wire.send(f, always)
	if cap(b) <= maxPooledFrame {
		*bp = b[:0]
		framePool.Put(bp)
	}
	return ok
}

// framed writes the header of a frame of op in front of b[maxFrameHeader:]
// and returns the frame.
func framed(op ws.OpCode, b []byte) []byte {
	n := len(b) - maxFrameHeader
	var h [maxFrameHeader]byte
	var hl int
	switch {
	case n < 126:
		h[0], h[1], hl = 0x80|byte(op), byte(n), 2
	case n <= 0xffff:
		h[0], h[1], hl = 0x80|byte(op), 126, 4
		binary.BigEndian.PutUint16(h[2:], uint16(n))
	default:
		h[0], h[1], hl = 0x80|byte(op), 127, 10
		binary.BigEndian.PutUint64(h[2:], uint64(n))
	}
	start := maxFrameHeader - hl
	copy(b[start:], h[:hl])
	return b[start:]
}

// frame is a whole frame of op with payload p.
func frame(op ws.OpCode, p []byte) []byte {
	return framed(op, append(make([]byte, maxFrameHeader, maxFrameHeader+len(p)), p...))
}
