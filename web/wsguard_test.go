package web_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

func TestADuplicateOperationIDClosesTheSocketWith4409(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	site := seed.Project("Website relaunch")
	c := e.MustDialWS(t, srv, "bob")
	vars := map[string]any{"p": site.ID}
	c.Subscribe(t, "x", taskEventsSub, vars)
	testenv.WaitSubscribers(t, lv.Hub, site.ID, 1)

	t.Run("an id used again after its complete is a new operation", func(t *testing.T) {
		c.Send(t, testenv.WSMessage{ID: "x", Type: "complete"})
		testenv.WaitSubscribers(t, lv.Hub, site.ID, 0)
		c.Subscribe(t, "x", taskEventsSub, vars)
		testenv.WaitSubscribers(t, lv.Hub, site.ID, 1)
	})
	t.Run("an id used again after the server completed it is a new operation", func(t *testing.T) {
		for range 2 {
			c.Subscribe(t, "q", "{ me { id } }", nil)
			var got []string
			for m := c.MustRead(t); !(m.ID == "q" && m.Type == "complete"); m = c.MustRead(t) {
				if m.ID == "q" {
					got = append(got, m.Type+" "+string(m.Payload))
				}
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], "next ") || !strings.Contains(got[0], `"bob"`) {
				t.Fatalf("the query got %q, want one next with bob", got)
			}
		}
	})
	t.Run("an id still running closes the socket", func(t *testing.T) {
		c.Subscribe(t, "x", taskEventsSub, vars)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for {
			m, err := c.Read(ctx)
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				if ce.Code != web.CloseDuplicateID || !strings.Contains(ce.Reason, "x already exists") {
					t.Fatalf("closed with %d %q, want 4409 Subscriber for x already exists", ce.Code, ce.Reason)
				}
				break
			}
			if err != nil {
				t.Fatalf("want the close 4409, got %v", err)
			}
			if m.Type == "next" && m.ID == "x" {
				t.Fatalf("the duplicate ran: %s", m.Payload)
			}
		}
		// Its subscriptions end with it.
		testenv.WaitSubscribers(t, lv.Hub, site.ID, 0)
	})
}

func TestADuplicateOperationIDOnTheLegacyProtocolIsRefusedAlone(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	site := seed.Project("Website relaunch")
	sub := map[string]any{"query": taskEventsSub, "variables": map[string]any{"p": site.ID}}
	c, err := testenv.DialWSURL(t, srv.URL, testenv.WSProtocol("graphql-ws"), testenv.WSAuth("Bearer "+e.Token(t, "bob")))
	if err != nil {
		t.Fatal(err)
	}
	c.Start(t, "x", sub)
	testenv.WaitSubscribers(t, lv.Hub, site.ID, 1)
	c.Start(t, "x", sub)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		m, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("want an error for the duplicate, got %v", err)
		}
		if m.Type == "error" {
			if m.ID != "x" || !strings.Contains(string(m.Payload), "running") {
				t.Fatalf("error %s %s", m.ID, m.Payload)
			}
			break
		}
	}
	// The first runs on, alone.
	if n := lv.Hub.Subscribers(site.ID); n != 1 {
		t.Fatalf("%d subscribers after the duplicate, want the first alone", n)
	}
}
