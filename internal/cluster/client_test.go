package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

var httpClient = &http.Client{Timeout: 10 * time.Second}

// post sends one GraphQL operation to an instance and decodes its data
// into out; an error for anything but an answer without errors.
func post(url, token, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		return fmt.Errorf("HTTP %d: %w", res.StatusCode, err)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("HTTP %d: %s", res.StatusCode, r.Errors[0].Message)
	}
	return json.Unmarshal(r.Data, out)
}

// received is one event a subscriber got.
type received struct {
	Cursor, Kind, SubjectID string
	At                      time.Time // when it arrived
}

// subscriber follows a project's events over graphql-ws, resuming with its
// last cursor on the next instance whenever its stream ends or its
// connection drops, as a client of the contract does.
type subscriber struct {
	urls    []string
	token   string
	project string

	mu       sync.Mutex
	got      []received
	sessions int // subscriptions made: 1 + resumptions
}

const eventsSub = `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) { cursor kind subjectId } }`

func (s *subscriber) run(ctx context.Context, first int) {
	for i := first; ctx.Err() == nil; i++ {
		s.session(ctx, s.urls[i%len(s.urls)])
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// session is one connection: subscribe (after the last cursor, if any),
// take events until the stream ends or fails.
func (s *subscriber) session(ctx context.Context, url string) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, strings.Replace(url, "http", "ws", 1)+"/query",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	if wsjson.Write(dctx, c, map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + s.token}}) != nil {
		return
	}
	var ack struct{ Type string }
	if wsjson.Read(dctx, c, &ack) != nil || ack.Type != "connection_ack" {
		return
	}
	s.mu.Lock()
	vars := map[string]any{"p": s.project}
	if n := len(s.got); n > 0 {
		vars["after"] = s.got[n-1].Cursor
	}
	s.sessions++
	s.mu.Unlock()
	if wsjson.Write(dctx, c, map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": eventsSub, "variables": vars}}) != nil {
		return
	}
	for {
		var m struct {
			Type    string
			Payload struct {
				Data struct {
					ProjectEvents *struct{ Cursor, Kind, SubjectID string }
				}
			}
		}
		if err := wsjson.Read(ctx, c, &m); err != nil {
			return
		}
		if m.Type == "ping" {
			_ = wsjson.Write(ctx, c, map[string]any{"type": "pong"})
			continue
		}
		ev := m.Payload.Data.ProjectEvents
		if m.Type != "next" || ev == nil {
			return // error or complete: resume
		}
		s.mu.Lock()
		s.got = append(s.got, received{Cursor: ev.Cursor, Kind: ev.Kind, SubjectID: ev.SubjectID, At: time.Now()})
		s.mu.Unlock()
	}
}

// events returns what the subscriber got so far.
func (s *subscriber) events() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.got...)
}
