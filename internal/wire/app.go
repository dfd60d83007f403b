package wire

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

// App is one server instance around an open store, started by Open and
// stopped by Close: the one lifecycle that the server (server.go), the
// test harness (testenv), the benchmarks and the end-to-end tests all
// run, so that none of them wires its own.
//
// Open starts, in order: the store's cleanup worker; the live-updates
// broker and this instance's hub, the broker made the store's event sink
// (through the telemetry's counter); the outbox sweep, which publishes
// events whose publication failed or whose instance stopped; the /query
// handler; the HTTP server on Addr. Close stops them in reverse: the hub
// ends every subscription (clients resume with their cursors), the HTTP
// server stops taking connections and lets requests in flight finish
// (Grace), the background workers stop, the queued outbox deletes are
// flushed, the broker closes. Close returns once every goroutine Open
// started has ended.
type App struct {
	// Store is the open store; Auth verifies (and may sign) tokens.
	Store *dynamo.Store
	Auth  *auth.Authenticator
	// Options are the handler's; Open sets their Store, Auth and Live.
	Options web.Options
	// Live configures the broker (NATS_URL, or an embedded server) and Hub
	// the instance's hub.
	Live live.Config
	Hub  live.HubConfig
	// Telemetry counts the background calls and the events published; nil:
	// none.
	Telemetry *telemetry.Telemetry
	// Addr is the address to listen on; empty: a free loopback port.
	// NoListen: no HTTP server; the caller serves Handler (httptest).
	Addr     string
	NoListen bool
	// NoBackground: neither the cleanup worker nor the outbox sweep runs
	// (tests that pin DynamoDB calls run them by hand); Close still
	// flushes the outbox.
	NoBackground bool
	// Routes, when set, makes the server's handler from /query's (the IDE,
	// /healthz); nil: /query alone.
	Routes func(query http.Handler) http.Handler
	// DemoToken is the bearer token the server printed for the demo user
	// (development starts without JWT_SECRET), for tests; empty otherwise.
	DemoToken string
	// Grace is how long requests in flight may take at Close; 0: 15 s.
	Grace time.Duration
	// OutboxInterval and OutboxMinAge tune the outbox sweep; 0: the
	// dynamo defaults.
	OutboxInterval, OutboxMinAge time.Duration
	// CleanupEvery is how often the cleanup worker looks for work; 0: a
	// minute.
	CleanupEvery time.Duration

	// Set by Open.
	Broker  *live.Broker
	LiveHub *live.Hub
	// Handler is /query's handler.
	Handler http.Handler
	// URL is the server's base URL, e.g. http://127.0.0.1:8080.
	URL string

	cancel context.CancelFunc
	server *http.Server
	served chan error
	wg     sync.WaitGroup // the goroutines Open started: Close waits for them
}

// Open starts the instance (see App). On an error it stops what it had
// started.
func (a *App) Open(ctx context.Context) (err error) {
	if a.Store == nil || a.Auth == nil {
		return errors.New("wire: an App needs a store and an authenticator")
	}
	ctx, a.cancel = context.WithCancel(ctx)
	defer func() {
		if err != nil {
			a.cancel()
			a.wg.Wait()
			if a.Broker != nil {
				a.Broker.Close()
			}
		}
	}()
	bg := a.Telemetry.Background(ctx) // the store's background calls: counted in the metrics, traced in no span
	if !a.NoBackground {
		a.wg.Go(func() { a.Store.RunCleanupWorker(bg, cmp.Or(a.CleanupEvery, time.Minute)) })
	}

	if a.Broker, a.LiveHub, err = OpenLive(bg, a.Store, a.Live, a.Hub); err != nil {
		return fmt.Errorf("live updates: %w", err)
	}
	a.Store.Events = a.Telemetry.EventSink(a.Store.Events) // counts the events published
	// Any instance publishes the events whose publication failed or whose
	// instance stopped between commit and publish (dynamo/outbox.go); the
	// broker's duplicate window (15m) far exceeds interval+minAge (40s).
	if !a.NoBackground {
		a.wg.Go(func() {
			a.Store.RunOutbox(bg, cmp.Or(a.OutboxInterval, dynamo.DefaultOutboxInterval), cmp.Or(a.OutboxMinAge, dynamo.DefaultOutboxMinAge))
		})
	}

	o := a.Options
	o.Live = a.LiveHub
	a.Handler = NewHandler(a.Store, a.Auth, o)
	if a.NoListen {
		return nil
	}
	h := a.Handler
	if a.Routes != nil {
		h = a.Routes(h)
	}
	addr := a.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		a.LiveHub.Close()
		return err
	}
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	a.URL = "http://" + net.JoinHostPort(host, fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	a.server = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	a.served = make(chan error, 1)
	a.wg.Go(func() { a.served <- a.server.Serve(ln) })
	return nil
}

// Done is closed with the server's error when it stops serving by itself
// (not by Close).
func (a *App) Done() <-chan error { return a.served }

// Close stops the instance gracefully (see App) and reports the HTTP
// server's shutdown error, if any.
func (a *App) Close() error {
	if a.cancel == nil {
		return nil
	}
	// Subscriptions end first (clients resume with their cursors), so that
	// no event stream holds the shutdown; then the server stops taking
	// connections and lets requests in flight finish.
	if a.LiveHub != nil {
		a.LiveHub.Close()
	}
	var err error
	if a.server != nil {
		sctx, cancel := context.WithTimeout(context.Background(), cmp.Or(a.Grace, 15*time.Second))
		if serr := a.server.Shutdown(sctx); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = serr
		}
		cancel()
	}
	// The background workers stop (Close waits for them); then the
	// published events' outbox items queued so far, the sweep's included,
	// are deleted before the broker closes.
	a.cancel()
	a.wg.Wait()
	fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if ferr := a.Store.FlushOutbox(fctx); ferr != nil {
		a.Store.Log.Warn("flushing the outbox at shutdown", "err", ferr)
	}
	cancel()
	if a.Broker != nil {
		a.Broker.Close()
	}
	a.cancel = nil
	return err
}
