package graph_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// waitMetric waits until metric name (a counter or gauge) has value want
// at labels, and fails the test if it does not within testTimeout: what
// ends a subscription or a connection runs on the server's goroutines,
// after the client's side is done.
func waitMetric(t *testing.T, tel *telemetry.Telemetry, name, labels string, want float64) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		got, ok := testenv.Values(testenv.Scrape(t, tel), name)[labels]
		if ok && got == want || !ok && want == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s{%s} = %v, want %v", name, labels, got, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// A subscription through the real handler counts in the open subscriptions
// and its WebSocket in the open connections, not in the in-flight
// requests, for as long as each lasts; the event it gets counts as
// published by its mutation's commit and delivered once.
func TestMetricsOfSubscriptionsOverWebSocket(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
	lv, srv := e.StartLive(t, pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}}, live.HubConfig{}) // its broker behind tel's counter, as the server's
	web := seed.Project("Website relaunch")

	c := e.MustDialWS(t, srv, "bob")
	c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	fams := testenv.Scrape(t, tel)
	if got := testenv.Values(fams, "taskgraph_graphql_subscriptions_open")[""]; got != 1 {
		t.Errorf("open subscriptions %v, want 1", got)
	}
	if got := testenv.Values(fams, "taskgraph_live_connections_open")["transport=websocket"]; got != 1 {
		t.Errorf("open WebSocket connections %v, want 1", got)
	}
	if got := testenv.Values(fams, "taskgraph_http_requests_in_flight")[""]; got != 0 {
		t.Errorf("in-flight requests %v with only a WebSocket open, want 0", got)
	}

	mustUpdateTask(t, e, "alice", seed.Task("Write the landing page copy").ID, `title: "Landing page copy, v2"`)
	if got := decodeEvent(t, c.MustNext(t, "1")).ProjectEvents; got.Kind != "TASK_UPDATED" {
		t.Fatalf("event %+v", got)
	}
	// Both counters are added on the server's goroutines after the frame
	// left (the delivery counts its recipients once all are written; the
	// publication once the broker acknowledged it): wait for them.
	waitMetric(t, tel, "taskgraph_live_events_published_total", "outcome=OK,source=commit", 1)
	waitMetric(t, tel, "taskgraph_live_events_delivered_total", "", 1)
	if got := testenv.SampleCounts(testenv.Scrape(t, tel), "taskgraph_live_event_fanout_seconds")[""]; got != 1 {
		t.Errorf("fan-outs observed %d, want the event's one", got)
	}
	if got := testenv.Values(testenv.Scrape(t, tel), "taskgraph_live_events_published_total"); len(got) != 1 {
		t.Errorf("events published %v, want one by its commit", got)
	}

	c.Send(t, testenv.WSMessage{ID: "1", Type: "complete"})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 0)
	waitMetric(t, tel, "taskgraph_graphql_subscriptions_open", "", 0) // counted out after the hub lets go
	if got := testenv.Values(testenv.Scrape(t, tel), "taskgraph_live_connections_open")["transport=websocket"]; got != 1 {
		t.Errorf("open WebSocket connections %v with the socket still open, want 1", got)
	}
	_ = c.Conn.CloseNow()
	waitMetric(t, tel, "taskgraph_live_connections_open", "transport=websocket", 0)
	// The subscription counts as an operation once, when it ended.
	if got := testenv.SampleCounts(testenv.Scrape(t, tel), "taskgraph_graphql_operation_duration_seconds")["operation=anonymous,outcome=OK,type=subscription"]; got != 1 {
		t.Errorf("subscription operations counted %d times, want once", got)
	}
}

// A server-sent-events subscription counts as open while its stream lasts.
func TestMetricsOfSubscriptionsOverServerSentEvents(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
	lv, srv := e.StartLive(t, pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	res := testenv.MustOpenSSE(t, srv, "Bearer "+e.Token(t, "carol"), taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	fams := testenv.Scrape(t, tel)
	if got := testenv.Values(fams, "taskgraph_graphql_subscriptions_open")[""]; got != 1 {
		t.Errorf("open subscriptions %v, want 1", got)
	}
	if got := testenv.Values(fams, "taskgraph_live_connections_open")["transport=sse"]; got != 1 {
		t.Errorf("open SSE streams %v, want 1", got)
	}
	res.Body.Close() // the client goes away
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 0)
	// The hub lets the subscription go before its resolver returns and the
	// gauge counts it out: wait for the gauge too.
	waitMetric(t, tel, "taskgraph_graphql_subscriptions_open", "", 0)
	waitMetric(t, tel, "taskgraph_live_connections_open", "transport=sse", 0)
}

// A subscription refused at its start is never counted as open.
func TestRefusedSubscriptionIsNeverOpen(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true})
	_, srv := e.StartLive(t, pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}}, live.HubConfig{})
	c := e.MustDialWS(t, srv, "alice")
	c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": seed.Project("Website relaunch").ID, "after": "bm90IGEgY3Vyc29y"})
	mustEndWith(t, c, "1", "BAD_USER_INPUT")
	if got := testenv.Values(testenv.Scrape(t, tel), "taskgraph_graphql_subscriptions_open")[""]; got != 0 {
		t.Errorf("open subscriptions %v after a refused one, want 0", got)
	}
}

// With tracing, a WebSocket gets no HTTP span, and a subscription's span
// covers its start only: it has ended while the subscription is open.
func TestSubscriptionSpanCoversItsStartOnly(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	exp := tracetest.NewInMemoryExporter()
	tel := testenv.MustTelemetry(t, telemetry.Config{SpanExporter: exp})
	lv, srv := e.StartLive(t, pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	c := e.MustDialWS(t, srv, "bob")
	c.Subscribe(t, "1", `subscription Watch($p: ID!) { projectEvents(projectId: $p) { kind } }`, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	// The span ends once the subscribe returns, just after the hub has the
	// subscription: wait for it (the subscription stays open).
	var names []string
	var start *tracetest.SpanStub
	for deadline := time.Now().Add(30 * time.Second); start == nil; time.Sleep(2 * time.Millisecond) {
		names = names[:0]
		for _, s := range exp.GetSpans() {
			names = append(names, s.Name)
			if s.Name == "subscription Watch" {
				start = &s
			}
		}
		if start == nil && time.Now().After(deadline) {
			t.Fatalf("spans %v: no ended span of the open subscription", names)
		}
	}
	if n := lv.Hub.Subscribers(web.ID); n != 1 {
		t.Fatalf("%d subscriptions after its span ended, want it still open", n)
	}
	found := false
	for _, a := range start.Attributes {
		found = found || a.Key == "graphql.subscription.span" && a.Value.AsString() == "start"
	}
	if !found {
		t.Errorf("subscription span attributes %v: want graphql.subscription.span=start", start.Attributes)
	}
	for _, n := range names {
		if n == "GET /query" {
			t.Errorf("spans %v: the WebSocket has an HTTP span", names)
		}
	}
}

// flakySink fails its first publication, then accepts.
type flakySink struct {
	mu     sync.Mutex
	failed bool
}

func (s *flakySink) Publish(context.Context, *domain.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.failed {
		s.failed = true
		return errors.New("the stream is down")
	}
	return nil
}

// A publication that fails at commit counts as an error; the sweep that
// publishes it later counts as a sweep, and its DynamoDB calls (through
// Background) count in the call metrics with their capacity requested,
// without a span.
func TestMetricsOfPublicationsAndTheSweep(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	exp := tracetest.NewInMemoryExporter()
	tel := testenv.MustTelemetry(t, telemetry.Config{Metrics: true, SpanExporter: exp})
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Telemetry: tel}})
	e.Store.Events = tel.EventSink(&flakySink{})
	mustUpdateTask(t, e, "alice", seed.Task("Write the landing page copy").ID, `title: "Swept"`)
	if got := testenv.Values(testenv.Scrape(t, tel), "taskgraph_live_events_published_total"); got["outcome=error,source=commit"] != 1 || len(got) != 1 {
		t.Fatalf("events published %v, want one failed at commit", got)
	}
	exp.Reset()
	e.Store.Now = func() time.Time { return testenv.Now.Add(time.Minute) }
	n, err := e.Store.SweepOutbox(tel.Background(context.Background()), 30*time.Second)
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d published, %v", n, err)
	}
	fams := testenv.Scrape(t, tel)
	if got := testenv.Values(fams, "taskgraph_live_events_published_total"); got["outcome=OK,source=sweep"] != 1 || got["outcome=error,source=commit"] != 1 {
		t.Errorf("events published %v, want the commit's failure and the sweep's success", got)
	}
	calls := testenv.SampleCounts(fams, "taskgraph_dynamodb_call_duration_seconds")
	if calls["operation=Query,outcome=OK"] < 16 || calls["operation=BatchWriteItem,outcome=OK"] < 1 {
		t.Errorf("DynamoDB calls %v: want the sweep's 16 Queries and its delete", calls)
	}
	if spans := exp.GetSpans(); len(spans) != 0 {
		t.Errorf("the sweep made %d spans, want none", len(spans))
	}
}
