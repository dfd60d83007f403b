// Package app is the taskgraph server process in one place: its
// configuration, read once from the flags and the environment (Config,
// LoadConfig), the App that opens everything a server runs and closes it
// again, the wiring of its parts (NewStore, NewHandler, OpenLive) and the
// commands (token, export, import). The binary (server.go's main calls
// Run), the end-to-end tests (e2e/), the test harness (internal/testenv)
// and the benchmarks (bench/) all start an App, so that what they test and
// measure is what runs.
package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

// App is the server process (after Ben Johnson's wtf Main): what its Config
// describes, opened by Open and closed by Close.
//
// Open checks the configuration, then binds the API's port (and the
// metrics' port) before it touches anything else, so that a start that
// cannot serve creates, seeds and prints nothing. Then it opens, in order:
// the telemetry (and the metrics listener); the store (on the embedded
// store: its data directory, locked, its data file loaded, and the saver
// that writes it every saveEvery; the demo data of a new embedded table);
// the authenticator (the development secret, the JWK Set and its
// refresher); the instance: the store's cleanup worker, the live-updates
// broker and this instance's hub, the broker made the store's event sink
// (through the telemetry's counter), the outbox sweep, the /query handler
// and the HTTP server. Last it prints the demo token (a development start
// without JWT_SECRET), saying what the table holds, and logs "serving".
//
// Close stops them in reverse: the hub ends every subscription (clients
// resume with their cursors), the HTTP server stops taking connections and
// lets requests in flight finish, the background workers stop, the queued
// outbox deletes are flushed, the broker closes, the JWK Set's refresher
// stops, the embedded store's data is saved a last time and the store
// closes, the telemetry flushes. Close returns once every goroutine Open
// started has ended.
type App struct {
	// Config is what the flags and the environment say (LoadConfig).
	Config Config
	// Log is the process's logger; nil: the store's (given), else
	// slog.Default(). Stdout is where a development start prints its demo
	// token; nil: nowhere.
	Log    *slog.Logger
	Stdout io.Writer

	// Store, Auth, Telemetry and TrustedDocuments are the App's
	// dependencies: Open makes each one left nil from Config, and uses one
	// set before Open as it is (tests and benchmarks bring a client that
	// counts calls, a fixed clock, their own secret).
	Store            *dynamo.Store
	Auth             *auth.Authenticator
	Telemetry        *telemetry.Telemetry
	TrustedDocuments *pipeline.TrustedDocuments

	// Hooks are for tests and benchmarks: the binary leaves them zero.
	Hooks Hooks

	// Set by Open.
	//
	// Data is the embedded store's data file, when Open opened the store
	// on a data directory.
	Data   *dynamo.DataFile
	Broker *live.Broker
	Hub    *live.Hub
	// Handler is /query's handler (without the IDE, /healthz or the Host
	// check: the HTTP server serves those around it).
	Handler http.Handler
	// URL is the server's base URL, e.g. http://127.0.0.1:8080 ("" with
	// Hooks.NoListen).
	URL string
	// DemoToken is the bearer token Open printed for the demo user
	// (development starts without JWT_SECRET); "" otherwise.
	DemoToken string

	closers []func() error // what Open opened, closed by Close in reverse
	ln      net.Listener   // the API's, bound first
	metrics net.Listener   // -metrics-addr's, bound first
	cancel  context.CancelFunc
	server  *http.Server
	served  chan error
	wg      sync.WaitGroup // the instance's goroutines: its workers and the HTTP server
}

// Hooks change what an App runs, for tests and benchmarks only.
type Hooks struct {
	// Graph are the handler's hooks (a dispatcher, a window, a read gate, no batching,
	// the event re-checks' waits).
	Graph pipeline.Hooks
	// NoListen: no HTTP server; the caller serves Handler (httptest).
	NoListen bool
	// NoBackground: the store's background work (cleanup jobs, outbox
	// sweep, change log expiry: dynamo.Store.RunBackground) does not run
	// (tests that pin DynamoDB calls run them by hand); Close still
	// flushes the outbox.
	NoBackground bool
	// Background tunes the store's background work (the outbox, the
	// cleanup jobs, the change log's expiry: dynamo.Background; its clock
	// too).
	Background dynamo.Background
}

// opened records a closer for Close.
func (a *App) opened(close func() error) { a.closers = append(a.closers, close) }

// Open opens the process (see App). On an error it closes what it had
// opened.
func (a *App) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			_ = a.Close()
		}
	}()
	if a.Log == nil {
		a.Log = slog.Default()
		if a.Store != nil {
			a.Log = a.Store.Log
		}
	}
	p, err := a.check()
	if err != nil {
		return err
	}
	if err := a.listen(); err != nil {
		return err
	}
	if err := a.openTelemetry(ctx); err != nil {
		return err
	}
	if err := a.openStore(ctx); err != nil {
		return err
	}
	if err := a.openAuth(ctx, &p); err != nil {
		return err
	}
	if err := a.openInstance(ctx, p); err != nil {
		return err
	}
	a.announce(ctx, p)
	return nil
}

// plan is what Open decided from the Config before it touched anything.
type plan struct {
	hosts *hostCheck
	cors  web.Origins
	// cursorKey is the live cursors' key and cursorWhere where it came
	// from (for the log, never the key); nil before openAuth when it is
	// derived from the development secret, and with a given Auth and no
	// CURSOR_KEY (the process's own random key: cursor.Process).
	cursorKey   []byte
	cursorWhere string
	// devWhere says where the development secret came from, for the
	// banner; "" without one.
	devWhere string
}

// check reads what the Config says and refuses what cannot be served,
// touching nothing: no port, file or table.
func (a *App) check() (plan, error) {
	c := a.Config
	var p plan
	var err error
	if p.hosts, err = newHostCheck(c.Production, c.AllowedHosts, c.Addr, a.Log); err != nil {
		return p, err
	}
	if c.Production && c.Debug || a.Auth == nil && c.Production && c.Secret == "" && c.JWKSURL == "" {
		return p, errors.New("-production needs JWT_SECRET or JWT_JWKS_URL and refuses -debug")
	}
	if a.Auth == nil && c.TokenTTL <= 0 {
		return p, errors.New("-max-token-lifetime must be positive")
	}
	if p.cursorKey, p.cursorWhere, err = configuredCursorKey(c, a.Auth == nil); err != nil {
		return p, err
	}
	if a.TrustedDocuments == nil && c.TrustedDocuments != "" {
		if a.TrustedDocuments, err = pipeline.LoadTrustedDocuments(c.TrustedDocuments); err != nil {
			return p, err // names the file
		}
	}
	p.cors, err = web.ParseOrigins(c.CORSOrigins)
	return p, err
}

// Done is closed with the HTTP server's error when it stops serving by
// itself (not by Close); nil with Hooks.NoListen.
func (a *App) Done() <-chan error { return a.served }

// Close closes what Open opened, in reverse, and returns the first error.
// Every goroutine Open started has ended when it returns.
func (a *App) Close() error {
	var err error
	for i := len(a.closers) - 1; i >= 0; i-- {
		if cerr := a.closers[i](); cerr != nil && err == nil {
			err = cerr
		}
	}
	a.closers = nil
	return err
}
