package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/graph/subscription"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// sseTransport is server-sent events (graphql-sse's distinct connections
// mode): a POST that accepts text/event-stream, each response an "event:
// next", the end an "event: complete", a ": ping" comment every
// KeepAliveInterval. A subscription's stream takes its connection from
// net/http (HTTP/1.1) once it is opened: like a WebSocket, it then holds
// one goroutine (its reader, which sees the client leave) and its events
// are written by whoever delivers them. Without a connection to take
// (HTTP/2), the request's goroutine stays until the stream ends.
type sseTransport struct {
	buffer int
	keep   *keepAlives
}

// Supports takes a POST of JSON that accepts text/event-stream.
func (sseTransport) Supports(r *http.Request) bool {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && mt == "application/json"
}

func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	start := graphql.Now()
	params := &graphql.RawParams{}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		err = dec.Decode(params)
	}
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(mustJSON(exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("json request body could not be decoded")})))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	rc, opErr := exec.CreateOperationContext(ctx, params)
	ctx = graphql.WithOperationContext(ctx, rc)
	s := &sseStream{done: make(chan struct{})}
	if opErr == nil && rc.Operation != nil && rc.Operation.Operation == ast.Subscription {
		s.hijack(w, t.buffer)
	}
	if s.wire == nil {
		f, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming unsupported", http.StatusInternalServerError)
			return
		}
		s.w, s.f = w, f
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Type", "text/event-stream")
		s.write([]byte(":\n\n"), true)
	}
	s.closedStream = telemetry.FromContext(ctx).StreamOpened(streamOf(r)) // its row's name: "sse"
	s.unkeep = t.keep.add(s)
	if opErr != nil {
		s.event(mustJSON(exec.DispatchError(ctx, opErr)), true)
		s.End(nil)
		return
	}
	responses, dctx := exec.DispatchOperation(subscription.WithStream(ctx, s), rc)
	for res := responses(dctx); res != nil; res = responses(dctx) {
		s.event(mustJSON(res), true)
	}
	s.mu.Lock()
	opened := s.opened
	s.mu.Unlock()
	switch {
	case !opened:
		s.End(nil)
	case s.wire != nil:
		s.watch()
	default: // the request's goroutine holds the stream
		select {
		case <-s.done:
		case <-r.Context().Done():
			s.gone()
		}
	}
}

// sseStream is one server-sent-events response: a subscription's Stream.
type sseStream struct {
	wire *wire // the connection taken from net/http; nil: written through w
	w    io.Writer
	f    http.Flusher

	closedStream func()
	unkeep       func()

	mu     sync.Mutex
	stop   func()
	opened bool
	ended  bool
	parked parkSlot      // its parking while no goroutine reads (watch)
	done   chan struct{} // closed at the end
}

// hijack takes the connection of an HTTP/1.1 request and writes the
// response's head itself: its body lasts until the connection closes.
func (s *sseStream) hijack(w http.ResponseWriter, buffer int) {
	nc, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	_ = nc.SetDeadline(time.Time{})
	var head bytes.Buffer
	head.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n")
	h := w.Header().Clone()
	for _, k := range []string{"Content-Type", "Cache-Control", "Connection", "Content-Length"} {
		h.Del(k)
	}
	_ = h.Write(&head)
	head.WriteString("\r\n:\n\n")
	s.wire = &wire{nc: nc, limit: buffer, onClose: s.wake}
	s.wire.send(head.Bytes(), true)
}

// write sends b; false when the stream cannot take it (behind, ended).
func (s *sseStream) write(b []byte, always bool) bool {
	if s.wire != nil {
		return s.wire.send(b, always)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	if _, err := s.w.Write(b); err != nil {
		return false
	}
	s.f.Flush()
	return true
}

// event writes one response as an "event: next".
func (s *sseStream) event(res []byte, always bool) bool {
	bp := framePool.Get().(*[]byte)
	b := append((*bp)[:0], "event: next\ndata: "...)
	b = append(b, res...)
	b = append(b, "\n\n"...)
	ok := s.write(b, always)
	if cap(b) <= maxPooledFrame {
		*bp = b[:0]
		framePool.Put(bp)
	}
	return ok
}

// keepAlive sends the ": ping" comment, unless the stream was sent an
// event since its last keep-alive (it is not idle).
func (s *sseStream) keepAlive(time.Time) {
	if s.wire != nil && s.wire.busy() {
		return
	}
	s.write(ssePing, true)
	if s.wire != nil {
		s.wire.busy() // the ping is not the stream's traffic
	}
}

// ssePing is the keep-alive comment's bytes (written, never changed).
var ssePing = []byte(": ping\n\n")

// watch waits for the client to leave, then ends the subscription:
// parked (park_linux.go), with no goroutine, until the socket has
// something to read; where parking is not available, the stream's one
// goroutine reads until then.
func (s *sseStream) watch() {
	if !parking.available() {
		go s.readUntilGone()
		return
	}
	s.mu.Lock()
	id := s.parked.reserve(&s.mu, s.readOnce)
	s.mu.Unlock()
	if !parking.arm(s.wire.nc, id) {
		go s.readUntilGone()
	}
}

// wake resumes a parked stream (its connection was closed by the server).
func (s *sseStream) wake() { s.parked.wake(&s.mu, s.readOnce) }

// readOnce reads what woke a parked stream: its end (then the
// subscription ends), or bytes a client should not send (dropped; parked
// again).
func (s *sseStream) readOnce() {
	var b [64]byte
	if _, err := s.wire.nc.Read(b[:]); err == nil {
		s.watch()
		return
	}
	s.gone()
	s.wire.close()
}

// readUntilGone reads the taken connection until the client closes it,
// then ends the subscription: the stream's one goroutine.
func (s *sseStream) readUntilGone() {
	var b [64]byte
	for {
		if _, err := s.wire.nc.Read(b[:]); err != nil {
			break
		}
	}
	s.gone()
	s.wire.close()
}

// gone ends the subscription of a client that left.
func (s *sseStream) gone() {
	s.mu.Lock()
	s.ended = true
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.finish()
}

// finish releases the stream once (its metric, its keep-alive).
func (s *sseStream) finish() {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return
	default:
		close(s.done)
	}
	s.mu.Unlock()
	s.unkeep()
	s.closedStream()
}

// Opened records that the subscription runs (subscription.Stream).
func (s *sseStream) Opened(stop func()) {
	s.mu.Lock()
	s.opened, s.stop = true, stop
	ended := s.ended
	s.mu.Unlock()
	if ended {
		stop()
	}
}

// Send pushes one event's response; false when the client is too far
// behind.
func (s *sseStream) Send(res []byte) bool { return s.event(res, false) }

// Room waits until the stream can take one more event.
func (s *sseStream) Room(ctx context.Context) bool {
	if s.wire == nil {
		return true // written through the request: each write waits for the client
	}
	return s.wire.Room(ctx)
}

// End ends the stream: final, then "event: complete", then the response.
func (s *sseStream) End(final []byte) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if final != nil {
		s.event(final, true)
	}
	complete := []byte("event: complete\n\n")
	if s.wire != nil {
		s.mu.Lock()
		s.ended = true
		s.mu.Unlock()
		s.wire.last(complete, s.wire.close)
	} else {
		s.write(complete, true)
		s.mu.Lock()
		s.ended = true
		s.mu.Unlock()
	}
	s.finish()
}

// CutOff cannot close a stream with a code: the subscription then ends
// with its error (End).
func (s *sseStream) CutOff(int, string) bool { return false }
