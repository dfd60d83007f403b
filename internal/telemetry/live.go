package telemetry

import (
	"context"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
)

// Live updates and the store's background work: the metrics of
// subscriptions, of the WebSocket and server-sent-events streams that carry
// them, of the events published and delivered, and of the DynamoDB calls
// made outside any request (the outbox sweep, the cleanup worker).

// countCall counts a finished DynamoDB call in the call metrics.
func (t *Telemetry) countCall(c *client.Call, outcome string) {
	m := t.m
	if m == nil {
		return
	}
	op := callOpLabel(c.Operation)
	m.callDuration.WithLabelValues(op, outcome).Observe(c.End.Sub(c.Start).Seconds())
	if c.ReadUnits > 0 {
		m.callReadUnits.WithLabelValues(op).Add(c.ReadUnits)
	}
	if c.WriteUnits > 0 {
		m.callWriteUnits.WithLabelValues(op).Add(c.WriteUnits)
	}
	if c.Attempts > 1 {
		m.callRetries.WithLabelValues(op).Add(float64(c.Attempts - 1))
	}
	if c.Throttles > 0 {
		m.callThrottles.WithLabelValues(op).Add(float64(c.Throttles))
	}
	if c.Unprocessed > 0 {
		m.callUnprocessed.WithLabelValues(op).Add(float64(c.Unprocessed))
	}
}

// background observes the calls of the store's background work: metrics
// only, no span (a sweep every few seconds would make a trace of its own
// each time, of little use).
type background struct{ t *Telemetry }

func (b background) ObserveCall(_ context.Context, c *client.Call) {
	b.t.countCall(c, callOutcome(c.Err))
}

// Background returns ctx with its DynamoDB calls counted in the call
// metrics (consumed capacity, latency, retries, throttles) but traced in no
// span: for the store's background work (dynamo.Store.RunBackground),
// which no request pays for. ctx itself when metrics are off.
func (t *Telemetry) Background(ctx context.Context) context.Context {
	if !t.Metrics() {
		return ctx
	}
	return client.WithObserver(ctx, background{t})
}

// EventSink wraps the store's event sink (dynamo.Store.Events) to count the
// events handed to it, by source: "commit" when a mutation publishes its
// own event (its context is a request's), "sweep" when the outbox sweep
// publishes one whose publication failed or was lost; and by outcome (OK,
// error). sink itself when metrics are off or sink is nil.
func (t *Telemetry) EventSink(sink domain.EventSink) domain.EventSink {
	if !t.Metrics() || sink == nil {
		return sink
	}
	return countingSink{sink: sink, t: t}
}

type countingSink struct {
	sink domain.EventSink
	t    *Telemetry
}

func (s countingSink) Publish(ctx context.Context, ev *domain.Event) error {
	err := s.sink.Publish(ctx, ev)
	source, outcome := "sweep", "OK"
	if FromContext(ctx) != nil {
		source = "commit"
	}
	if err != nil {
		outcome = "error"
	}
	s.t.m.eventsPublished.WithLabelValues(source, outcome).Inc()
	return err
}

// ConnectionRefused counts a connection refused for want of descriptors
// (taskgraph_connections_refused_total).
func (t *Telemetry) ConnectionRefused() {
	if t != nil && t.m != nil {
		t.m.refused.Inc()
	}
}

// StreamOpened counts a WebSocket connection or server-sent-events stream
// of transport ("websocket", "sse") as open
// (taskgraph_live_connections_open) until the returned function is called.
func (t *Telemetry) StreamOpened(transport string) (closed func()) {
	if t == nil || t.m == nil {
		return func() {}
	}
	g := t.m.streams.WithLabelValues(transport)
	g.Inc()
	var once sync.Once
	return func() { once.Do(g.Dec) }
}

// EventsResolved counts n resolutions of an event
// (taskgraph_live_event_resolutions_total).
func (t *Telemetry) EventsResolved(n int) {
	if t != nil && t.m != nil && n > 0 {
		t.m.resolutions.Add(float64(n))
	}
}

// EventsDelivered counts n events sent to subscribers
// (taskgraph_live_events_delivered_total).
func (t *Telemetry) EventsDelivered(n int) {
	if t != nil && t.m != nil && n > 0 {
		t.m.eventsDelivered.Add(float64(n))
	}
}

// EventDelivered counts an event sent to a subscriber
// (taskgraph_live_events_delivered_total).
func (t *Telemetry) EventDelivered() {
	if t != nil && t.m != nil {
		t.m.eventsDelivered.Inc()
	}
}

// EventFannedOut observes how long an event took from its arrival at this
// instance until it was written to its last local subscriber
// (taskgraph_live_event_fanout_seconds).
func (t *Telemetry) EventFannedOut(d time.Duration) {
	if t != nil && t.m != nil {
		t.m.fanOut.Observe(d.Seconds())
	}
}
