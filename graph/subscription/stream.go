package subscription

import (
	"context"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Stream is one subscription operation's way to its client, as a
// transport opens it (a WebSocket's operation, a server-sent-events
// response) and puts it in the operation's context (WithStream). Its
// methods are called by whichever goroutine delivers an event, never at
// once for one stream; none of them waits on the client but Room.
type Stream interface {
	// Opened tells the transport the subscription runs: its events come
	// through Send, its end through End or CutOff; stop ends it from the
	// transport's side (the client completed it, or left).
	Opened(stop func())
	// Send writes one response (the JSON of {data, errors}) without
	// waiting; false when the client is too far behind to take it (the
	// subscription is then ended with live.ErrSlow).
	Send(response []byte) bool
	// Room waits until the client can take one more response without
	// falling behind; false when the stream ended or ctx did.
	Room(ctx context.Context) bool
	// End ends the operation: final (a response with the error that ended
	// it) when not nil, then the protocol's end of an operation.
	End(final []byte)
	// CutOff closes the client's connection with code and reason (a
	// WebSocket's close, after what it had sent) and reports whether it
	// could; a stream that cannot (server-sent events) is then End-ed.
	CutOff(code int, reason string) bool
}

type streamKey struct{}

// WithStream returns ctx carrying the stream its subscription operation
// opens (the transports that stream put it there).
func WithStream(ctx context.Context, s Stream) context.Context {
	return context.WithValue(ctx, streamKey{}, s)
}

func streamOf(ctx context.Context) Stream {
	s, _ := ctx.Value(streamKey{}).(Stream)
	return s
}

// CloseTryAgainLater is the WebSocket close code of a connection whose
// subscriber fell behind (RFC 6455's 1013 Try Again Later): the graphql-ws
// client retries it (4400, 4401, 4403 after its attempts, 4406, 4409,
// 4429, 4500 and most 1xxx codes are fatal to it), and a client that
// resubscribes with after: its last cursor misses nothing.
const CloseTryAgainLater = 1013

// The close reasons (at most 123 bytes) of a subscriber that fell behind
// and of an event resolved too late.
const (
	reasonFellBehind = "subscriber fell behind; resume with your last cursor"
	reasonLate       = "event resolved too late; resume with your last cursor"
)

// errLate ends a subscription whose event could not be resolved within
// its read budget (the event timeout): a retryable end, as for a
// subscriber that fell behind.
var errLate = &domain.Error{Code: domain.EUNAVAILABLE,
	Message: "an event could not be resolved in time and the subscription was ended; subscribe again with after: the last cursor received"}

// endResponse is the last response of a stream ended by err: data null,
// the error as the pipeline presents it, at the subscription's field.
func (s *Server) endResponse(err error) []byte {
	ctx := graphql.WithResponseContext(context.Background(), s.cfg.Present, s.cfg.Recover)
	gerr := s.cfg.PresentEnd(ctx, err)
	s.cfg.Log.Debug("subscription ended", "code", gerr.Extensions["code"], "reason", gerr.Message)
	gerr.Path = ast.Path{ast.PathName("projectEvents")}
	b, _ := json.Marshal(&graphql.Response{Data: json.RawMessage("null"), Errors: gqlerror.List{gerr}})
	return b
}
