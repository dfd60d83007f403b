package web_test

import (
	"errors"
	"testing"

	"github.com/coder/websocket"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

// The WebSocket transport's own refusals: connection_init's token, and the
// CORS origins at the upgrade.

func TestWebSocketInitRefusesAMissingOrBadToken(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	_, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	for name, authorization := range map[string]string{"none": "", "malformed": "Bearer nope", "not bearer": "Basic " + e.Token(t, "bob")} {
		t.Run(name+" is closed with 4403 Forbidden", func(t *testing.T) {
			_, err := testenv.DialWS(t, srv, authorization)
			if err == nil {
				t.Fatal("the connection was accepted")
			}
			// graphql-transport-ws: 4403 Forbidden; a normal closure (1000)
			// would make the graphql-ws client reconnect without end.
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != web.CloseForbidden || ce.Reason != "Forbidden" {
				t.Errorf("refused with %v, want the close 4403 Forbidden", err)
			}
		})
	}
}

func TestWebSocketsFollowTheCORSOrigins(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	a := e.App(pipeline.Options{})
	a.Config.CORSOrigins = "https://app.example.com" // CORS_ORIGINS
	_, srv := e.StartApp(t, a)
	if _, err := testenv.DialWSFrom(t, srv, "https://app.example.com", "Bearer "+e.Token(t, "bob")); err != nil {
		t.Errorf("an allowed origin was refused: %v", err)
	}
	if _, err := testenv.DialWSFrom(t, srv, "https://evil.example", "Bearer "+e.Token(t, "bob")); err == nil {
		t.Error("another origin was let in")
	}
}
