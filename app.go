package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/internal/wire"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

// App is the server process (after wtf's Main): what the settings describe,
// opened by Open and closed by Close. The binary (runServing) and the
// end-to-end tests start it the same way.
//
// Open opens, in order: the telemetry (and the metrics listener of
// -metrics-addr); the store (on the embedded store: its data file, loaded,
// and the saver that writes it every saveEvery); the demo data of a new
// embedded table; the authenticator (and its JWK Set, refreshed in the
// background); the instance (wire.App: the broker, the hub, the cleanup
// and outbox workers, the HTTP server). Close stops them in reverse, saves
// the embedded store's data a last time, and returns once every goroutine
// that Open started has ended.
type App struct {
	Settings settings
	Log      *slog.Logger
	// Stdout is where a development start prints its demo token.
	Stdout io.Writer

	// Instance is the running instance (set by Open): its URL, DemoToken,
	// Done.
	Instance *wire.App

	closers []func() error // what Open opened, closed by Close in reverse
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
	s, log := a.Settings, a.Log
	hosts, err := newHostCheck(s.production, s.allowedHosts, s.addr, log)
	if err != nil {
		return err
	}
	if s.production && ((s.secret == "" && s.jwksURL == "") || s.debug) {
		return errors.New("-production needs JWT_SECRET or JWT_JWKS_URL and refuses -debug")
	}
	if s.tokenTTL <= 0 {
		return errors.New("-max-token-lifetime must be positive")
	}
	var devSec []byte
	var devWhere string
	if needsDevSecret(s, s.jwksURL) {
		if devSec, devWhere, err = devSecret(s.dataDir); err != nil {
			return err
		}
	}
	ckey, ckeyWhere, err := cursorKey(s, devSec, devWhere)
	if err != nil {
		return err
	}
	var trusted *graph.TrustedDocuments
	if s.trusted != "" {
		if trusted, err = graph.LoadTrustedDocuments(s.trusted); err != nil {
			return err // names the file
		}
	}
	origins, err := web.ParseOrigins(s.corsOrigins)
	if err != nil {
		return err
	}

	tel, stopTelemetry, err := startTelemetry(ctx, s, log)
	if err != nil {
		return err
	}
	a.opened(func() error { stopTelemetry(); return nil })
	store, data, created, closeStore, err := openStore(ctx, s, log)
	if err != nil {
		return err
	}
	a.opened(func() error { closeStore(); return nil })
	if data != nil { // the embedded store: save its data every few seconds and at the end
		saver, stopSaver := context.WithCancel(ctx)
		saved := make(chan struct{})
		go func() { defer close(saved); data.Run(saver, saveEvery) }()
		a.opened(func() error {
			stopSaver()
			<-saved // no save of Run's may outlast this one, nor run into closeStore
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := data.Save(sctx); err != nil {
				return fmt.Errorf("saving the embedded store: %w", err)
			}
			return nil
		})
	}
	if created && s.demo && s.store == "embedded" {
		if err := store.Import(ctx, store.Demo(time.Now())); err != nil {
			return fmt.Errorf("loading demo data: %w", err)
		}
		log.Info("loaded demo data", "users", "alice bob carol dave")
	}
	authn := &auth.Authenticator{Secret: []byte(s.secret), Issuer: s.issuer, Audience: s.audience, MaxLifetime: s.tokenTTL}
	if s.jwksURL != "" {
		jctx, stopJWKS := context.WithCancel(ctx)
		a.opened(func() error { stopJWKS(); return nil })
		kf, err := keyfunc.NewDefaultCtx(jctx, []string{s.jwksURL}) // cached, refreshed hourly and on an unknown kid until jctx ends
		if err != nil {
			return fmt.Errorf("JWT_JWKS_URL: %w", err)
		}
		authn.JWKS = kf.Keyfunc
	}
	headers := map[string]string{}
	var demoToken string
	if s.secret == "" && s.jwksURL == "" {
		authn.Secret = devSec // needsDevSecret
		tok, err := authn.Sign("alice", s.tokenTTL)
		if err != nil {
			return err
		}
		headers["Authorization"] = "Bearer " + tok
		demoToken = tok
		fmt.Fprintf(a.Stdout, "\nJWT_SECRET is not set: using %s. A token for the demo user alice (valid %s):\n\n  Authorization: Bearer %s\n\nThe GraphQL IDE at %s has it filled in. Tokens for other users: go run . token bob\n\n", devWhere, s.tokenTTL, tok, browseURL(s.addr))
		if !loopback(s.addr) {
			log.Warn("listening beyond this machine: whoever reaches the server gets this token at /", "addr", s.addr)
		}
	}

	o := s.limits
	o.Log, o.Debug, o.Production, o.CORS, o.Telemetry = log, s.debug, s.production, origins, tel
	if o.TrustedDocuments = trusted; trusted != nil {
		log.Info("trusted documents", "file", s.trusted, "documents", trusted.Len(), "only", s.production)
	}
	lc := s.live
	lc.URL, lc.Log, lc.Name = s.natsURL, log, "taskgraph"
	if s.store == "embedded" && s.dataDir != "" { // the stream lasts as long as the table's data
		lc.StoreDir = filepath.Join(s.dataDir, "nats")
	}
	hc := s.liveHub
	hc.CursorKey = ckey
	inst := &wire.App{Store: store, Auth: authn, Options: o, Live: lc, Hub: hc, Telemetry: tel, Addr: s.addr, DemoToken: demoToken}
	inst.Routes = func(query http.Handler) http.Handler {
		return routes(store, func() *live.Broker { return inst.Broker }, s.production, headers, hosts, query)
	}
	if err := inst.Open(ctx); err != nil {
		return err
	}
	a.Instance = inst
	a.opened(inst.Close)
	log.Info("live updates", "nats", map[bool]string{true: "embedded", false: "NATS_URL"}[inst.Broker.Embedded()], "state", inst.Broker.State(), "retention", lc.MaxAge, "cursorkey", ckeyWhere)
	log.Info("serving", "addr", inst.URL+"/", "table", s.table)
	return nil
}

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
