package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"syscall"
	"time"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/web"
)

// shutdownGrace is how long requests in flight may take at Close.
const shutdownGrace = 15 * time.Second

// listen binds the API's port (Config.Addr; "": a free loopback port) and
// -metrics-addr's, the first thing Open does once the Config is checked:
// a start that cannot serve stops before it creates, seeds or prints
// anything.
func (a *App) listen() error {
	if !a.Hooks.NoListen {
		addr := cmp.Or(a.Config.Addr, "127.0.0.1:0")
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return listenError("the API", addr, "-addr, or HOST and PORT", err)
		}
		a.ln = web.GuardAccept(ln, a.Log, func() { a.Telemetry.ConnectionRefused() }) // at the descriptor limit: refused, counted, said once
		a.opened(func() error { _ = ln.Close(); return nil })                         // closed already once the server has served
		host, _, _ := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			host = "localhost"
		}
		a.URL = "http://" + net.JoinHostPort(host, fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	}
	if a.Telemetry == nil && a.Config.MetricsAddr != "" {
		ln, err := net.Listen("tcp", a.Config.MetricsAddr)
		if err != nil {
			return listenError("the metrics", a.Config.MetricsAddr, "-metrics-addr", err)
		}
		a.metrics = ln
		a.opened(func() error { _ = ln.Close(); return nil })
	}
	return nil
}

// listenError says which port could not be bound, with what, and what to
// do when another process holds it.
func listenError(what, addr, setting string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s cannot listen on %s (%s): another process listens there; stop it, or choose another port: %w", what, addr, setting, err)
	}
	return fmt.Errorf("%s cannot listen on %s (%s): %w", what, addr, setting, err)
}

// openInstance starts the instance on the App's store (see App): the
// cleanup worker, the broker and hub, the outbox sweep, the handler and,
// on the port bound by listen, the HTTP server. closeInstance stops them.
func (a *App) openInstance(ctx context.Context, p plan) (err error) {
	ctx, a.cancel = context.WithCancel(ctx)
	a.opened(a.closeInstance)
	bg := a.Telemetry.Background(ctx) // the store's background calls: counted in the metrics, traced in no span
	lc, hc := a.Config.Live, a.Config.Hub
	lc.Log = a.Log
	if a.Config.StoreKind == "embedded" && a.Config.DataDir != "" { // the stream lasts as long as the table's data
		lc.StoreDir = filepath.Join(a.Config.DataDir, "nats")
	}
	hc.CursorKey = p.cursorKey
	if a.Broker, a.Hub, err = OpenLive(bg, a.Store, lc, hc); err != nil {
		return fmt.Errorf("live updates: %w", err)
	}
	a.Store.Events = a.Telemetry.EventSink(a.Store.Events) // counts the events published
	// The cleanup jobs, the outbox and the change log's expiry, driven by
	// what is pending (dynamo/background.go): an instance publishes the
	// events whose publication failed on it within Retry+MinAge (40 s, well
	// inside the broker's duplicate window, 15 min), and any instance
	// those that a stopped instance left within LeftoverBound.
	if !a.Hooks.NoBackground {
		a.wg.Go(func() { a.Store.RunBackground(bg, a.Hooks.Background) })
	}
	a.Handler = NewHandler(a.Store, a.Auth, a.handlerOptions(p))
	if a.ln == nil {
		return nil
	}
	a.server = &http.Server{Handler: a.routes(p), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	a.served = make(chan error, 1)
	a.wg.Go(func() { a.served <- a.server.Serve(a.ln) })
	return nil
}

// handlerOptions are the /query handler's options, all set here: the
// App's dependencies, its Config's limits and modes, its hooks.
func (a *App) handlerOptions(p plan) web.Options {
	c := a.Config
	return web.Options{
		Options: pipeline.Options{
			Deps: pipeline.Deps{Store: a.Store, Auth: a.Auth, Log: a.Log, Now: a.Store.Now, Live: a.Hub,
				Telemetry: a.Telemetry, TrustedDocuments: a.TrustedDocuments},
			Limits: c.Limits, Production: c.Production, Debug: c.Debug, Hooks: a.Hooks.Graph,
		},
		MaxBodyBytes: c.MaxBodyBytes, CORS: p.cors,
	}
}

// closeInstance stops what openInstance started, gracefully, and reports
// the HTTP server's shutdown error, if any. Subscriptions end first
// (clients resume with their cursors), so that no event stream holds the
// shutdown; then the server stops taking connections and lets requests in
// flight finish; then the background workers stop (it waits for them);
// then the published events' outbox items queued so far, the sweep's
// included, are deleted before the broker closes.
func (a *App) closeInstance() error {
	if a.Hub != nil {
		a.Hub.Close()
	}
	var err error
	if a.server != nil {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		if serr := a.server.Shutdown(sctx); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = serr
		}
		cancel()
	}
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
	return err
}
