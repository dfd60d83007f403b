package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/subscription"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// wsOp is one operation of a WebSocket, by its id; for a subscription, the
// Stream its events are pushed to (subscription.Stream).
type wsOp struct {
	c  *wsConn
	id string

	mu     sync.Mutex
	cancel context.CancelFunc // a query's or mutation's, while it runs
	stop   func()             // a subscription's, once it runs (Opened)
	opened bool
	ended  bool // completed (either side): nothing more is sent
}

// start runs a subscribe (graphql-transport-ws) or start (legacy)
// message's operation, in a goroutine of its own for as long as it runs:
// for a subscription, until it is registered. An id still running closes
// the socket with 4409 on graphql-transport-ws; the legacy protocol
// defines no close code, so the duplicate alone gets an error.
func (c *wsConn) start(id string, payload json.RawMessage) {
	c.mu.Lock()
	if c.ops[id] != nil {
		c.mu.Unlock()
		if c.proto == subprotocolGraphQLWS {
			b, _ := json.Marshal([]map[string]any{{"message": "an operation with this id is running",
				"extensions": map[string]any{"code": codes.BadRequest}}})
			c.write("error", id, b)
			return
		}
		c.closeWith(CloseDuplicateID, "Subscriber for "+truncate(id, 90)+" already exists")
		return
	}
	op := &wsOp{c: c, id: id}
	c.ops[id] = op
	ctx := c.ctx
	c.mu.Unlock()
	go op.run(ctx, payload)
}

// stopOp ends the operation id at the client's request (complete, stop):
// nothing more of it is sent (on graphql-transport-ws not even a complete,
// which could end a new operation that reuses the id).
func (c *wsConn) stopOp(id string) {
	c.mu.Lock()
	op := c.ops[id]
	delete(c.ops, id)
	c.mu.Unlock()
	if op != nil {
		op.abandon()
		if c.proto == subprotocolGraphQLWS { // the legacy protocol answers a stop with complete
			c.write("complete", id, nil)
		}
	}
}

// abandon ends the operation from the connection's side (the client
// completed it, or left).
func (op *wsOp) abandon() {
	op.mu.Lock()
	op.ended = true
	cancel, stop := op.cancel, op.stop
	op.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if stop != nil {
		stop()
	}
}

// run runs the operation through the executor and its pipeline, as every
// transport does, sending each response as it comes: a query's or
// mutation's (its parts with @defer), or, for a subscription, what its
// opening answers (a refusal) before it is left to push its events.
func (op *wsOp) run(ctx context.Context, payload json.RawMessage) {
	c := op.c
	defer func() {
		if r := recover(); r != nil {
			op.fail(gqlerror.List{{Message: "internal system error", Extensions: map[string]any{"code": codes.Internal}}})
		}
	}()
	start := graphql.Now()
	if p, err := liftDocumentID(payload); err == nil && !bytes.Equal(p, payload) {
		payload = p
	}
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		op.fail(gqlerror.List{{Message: "invalid json"}})
		return
	}
	params.Headers = c.headers
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ctx = graphql.StartOperationTrace(ctx)
	rc, errs := c.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := c.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			op.fail(resp.Errors)
			return
		}
		op.next(mustJSON(&graphql.Response{Errors: errs}))
		op.End(nil)
		return
	}
	ctx, cancel := context.WithCancel(subscription.WithStream(graphql.WithOperationContext(ctx, rc), op))
	defer cancel()
	op.mu.Lock()
	op.cancel = cancel
	ended := op.ended
	op.mu.Unlock()
	if ended {
		return
	}
	responses, ctx := c.exec.DispatchOperation(ctx, rc)
	for res := responses(ctx); res != nil; res = responses(ctx) {
		op.next(mustJSON(res))
	}
	op.mu.Lock()
	op.cancel = nil
	opened := op.opened
	op.mu.Unlock()
	if !opened {
		op.End(nil)
	}
}

// next sends one response of the operation, whatever the connection's
// backlog (a query's answer is not an event a slow subscriber may lose).
func (op *wsOp) next(res []byte) {
	if op.isEnded() {
		return
	}
	op.c.write(op.resultType(), op.id, res)
}

func (op *wsOp) resultType() string {
	if op.c.proto == subprotocolGraphQLWS {
		return "data"
	}
	return "next"
}

// fail refuses the operation with an error message (it ends the
// operation on graphql-transport-ws; the legacy protocol completes it).
func (op *wsOp) fail(errs gqlerror.List) {
	if !op.end() {
		return
	}
	op.c.write("error", op.id, mustJSON(errs))
	if op.c.proto == subprotocolGraphQLWS {
		op.c.write("complete", op.id, nil)
	}
}

func (op *wsOp) isEnded() bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.ended
}

// end marks the operation ended and forgets its id; false when it was.
func (op *wsOp) end() bool {
	op.mu.Lock()
	if op.ended {
		op.mu.Unlock()
		return false
	}
	op.ended = true
	op.mu.Unlock()
	c := op.c
	c.mu.Lock()
	if c.ops[op.id] == op {
		delete(c.ops, op.id)
	}
	c.mu.Unlock()
	return true
}

// Opened records that the subscription runs (subscription.Stream).
func (op *wsOp) Opened(stop func()) {
	op.mu.Lock()
	op.opened, op.stop = true, stop
	ended := op.ended
	op.mu.Unlock()
	if ended {
		stop()
	}
}

// Send pushes one event's response (subscription.Stream); false when the
// connection is too far behind.
func (op *wsOp) Send(res []byte) bool {
	if op.isEnded() {
		return true // completed by the client: its subscription is being closed
	}
	return op.c.sendMessage(op.resultType(), op.id, res, false)
}

// Room waits until the connection can take one more event.
func (op *wsOp) Room(ctx context.Context) bool { return op.c.wire.Room(ctx) }

// End ends the operation: final, then complete (subscription.Stream).
func (op *wsOp) End(final []byte) {
	if !op.end() {
		return
	}
	if final != nil {
		op.c.write(op.resultType(), op.id, final)
	}
	op.c.write("complete", op.id, nil)
}

// CutOff closes the connection with code and reason.
func (op *wsOp) CutOff(code int, reason string) bool { return op.c.CloseWith(code, reason) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // the executor's responses and errors: never seen
		panic(errors.Join(errors.New("encoding a response"), err))
	}
	return b
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
