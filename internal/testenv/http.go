package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// PostURL posts a GraphQL operation (query and its variables) to url, a
// server's /query (Post, To), with the Authorization header authorization
// ("" for none), and returns the answer decoded, its Status set. It fails
// no test, so any goroutine may call it: a request that cannot be sent or
// an answer that is not JSON is its error.
func PostURL(url, authorization, query string, vars map[string]any) (*Response, error) {
	raw, err := Post(map[string]any{"query": query, "variables": vars}, To(url), Header("Authorization", authorization))
	if err != nil {
		return nil, err
	}
	out := &Response{Status: raw.Status}
	if err := json.Unmarshal(raw.Body, out); err != nil {
		return nil, fmt.Errorf("POST %s answered %d, not JSON: %s", url, raw.Status, raw.Body)
	}
	return out, nil
}

// MustPostURL is PostURL that fails tb unless the answer is a 200 without
// errors, and decodes its data into out (nil: not decoded).
func MustPostURL(tb testing.TB, url, authorization, query string, vars map[string]any, out any) {
	tb.Helper()
	res, err := PostURL(url, authorization, query, vars)
	if err != nil {
		tb.Fatal(err)
	}
	if res.Status != http.StatusOK || len(res.Errors) > 0 {
		tb.Fatalf("POST %s %s: status %d, errors %+v", url, query, res.Status, res.Errors)
	}
	if out != nil {
		if err := json.Unmarshal(res.Data, out); err != nil {
			tb.Fatalf("decoding %s: %v", res.Data, err)
		}
	}
}

// SSEEvent is one server-sent event: its type (next, complete) and data.
type SSEEvent struct{ Type, Data string }

// SSEReader reads a server-sent event stream one event at a time.
type SSEReader struct{ sc *bufio.Scanner }

// NewSSEReader reads the events of r (a response's body).
func NewSSEReader(r io.Reader) *SSEReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	return &SSEReader{sc: sc}
}

// Next returns the next event; false at the stream's end (Err says why).
func (r *SSEReader) Next() (SSEEvent, bool) {
	var ev SSEEvent
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = strings.TrimPrefix(line, "data: ")
		case line == "" && ev.Type != "":
			return ev, true
		}
	}
	return SSEEvent{}, false
}

// Err is the error that ended the stream; nil at its end.
func (r *SSEReader) Err() error { return r.sc.Err() }

// ReadSSE reads the events of a stream as they come, on a goroutine of its
// own, until the stream ends; then the channel closes.
func ReadSSE(body io.Reader) <-chan SSEEvent {
	ch := make(chan SSEEvent, 64)
	r := NewSSEReader(body)
	go func() {
		defer close(ch)
		for ev, ok := r.Next(); ok; ev, ok = r.Next() {
			ch <- ev
		}
	}()
	return ch
}
