// Command taskgraph serves the task-manager GraphQL API. With no AWS
// configuration it runs on an embedded in-process store with demo data; see
// README.md for the settings.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/ide"
	"github.com/taskgraph/taskgraph/internal/wire"
)

func main() {
	env := readEnv()     // the one read of the environment (settings.go)
	wire.TuneGC(env.get) // GC defaults for a container: GOMEMLIMIT and GOGC override
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, env, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskgraph:", err)
		os.Exit(1)
	}
}

// run runs the server, or the command named in args, until ctx ends.
func run(ctx context.Context, env environment, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return runServing(ctx, env, args, stdin, stdout, stderr, nil)
}

// runServing is run that hands the started instance to serving (when not
// nil) once it serves: its URL and demo token are fields of the App.
func runServing(ctx context.Context, env environment, args []string, stdin io.Reader, stdout, stderr io.Writer, serving func(*wire.App)) (err error) {
	s, err := loadSettings(args, env, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(s.logFormat, s.logLevel, stderr)
	if err != nil {
		return err
	}
	if s.command != "" {
		return runCommand(ctx, s, stdin, stdout, stderr, log)
	}
	hosts, err := newHostCheck(s.production, s.allowedHosts, s.addr, log)
	if err != nil {
		return err
	}
	jwksURL := s.jwksURL
	if s.production && ((s.secret == "" && jwksURL == "") || s.debug) {
		return errors.New("-production needs JWT_SECRET or JWT_JWKS_URL and refuses -debug")
	}
	if s.tokenTTL <= 0 {
		return errors.New("-max-token-lifetime must be positive")
	}
	var devSec []byte
	var devWhere string
	if needsDevSecret(s, jwksURL) {
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
		var err error
		if trusted, err = graph.LoadTrustedDocuments(s.trusted); err != nil {
			return err // names the file
		}
	}
	origins, err := graph.ParseOrigins(s.corsOrigins)
	if err != nil {
		return err
	}

	tel, stopTelemetry, err := startTelemetry(ctx, s, log)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	store, data, created, closeStore, err := openStore(ctx, s, log)
	if err != nil {
		return err
	}
	defer closeStore()
	if data != nil { // the embedded store: save its data every few seconds and at the end
		saver, stopSaver := context.WithCancel(ctx)
		saved := make(chan struct{})
		defer func() {
			stopSaver()
			<-saved // no save of Run's may outlast this one, nor run into closeStore
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, serr := data.Save(sctx); serr != nil && err == nil {
				err = fmt.Errorf("saving the embedded store: %w", serr)
			}
		}()
		go func() { defer close(saved); data.Run(saver, saveEvery) }()
	}
	if created && s.demo && s.store == "embedded" {
		if err := store.Import(ctx, store.Demo(time.Now())); err != nil {
			return fmt.Errorf("loading demo data: %w", err)
		}
		log.Info("loaded demo data", "users", "alice bob carol dave")
	}
	auth := &graph.Authenticator{Secret: []byte(s.secret), Issuer: s.issuer, Audience: s.audience,
		MaxLifetime: s.tokenTTL}
	if jwksURL != "" {
		kf, err := keyfunc.NewDefaultCtx(ctx, []string{jwksURL}) // cached, refreshed hourly and on an unknown kid
		if err != nil {
			return fmt.Errorf("JWT_JWKS_URL: %w", err)
		}
		auth.JWKS = kf.Keyfunc
	}
	headers := map[string]string{}
	var demoToken string
	if s.secret == "" && jwksURL == "" {
		secret, where := devSec, devWhere // needsDevSecret
		auth.Secret = secret
		tok, err := auth.Sign("alice", s.tokenTTL)
		if err != nil {
			return err
		}
		headers["Authorization"] = "Bearer " + tok
		demoToken = tok
		fmt.Fprintf(stdout, "\nJWT_SECRET is not set: using %s. A token for the demo user alice (valid %s):\n\n  Authorization: Bearer %s\n\nThe GraphQL IDE at %s has it filled in. Tokens for other users: go run . token bob\n\n", where, s.tokenTTL, tok, browseURL(s.addr))
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
	app := &wire.App{Store: store, Auth: auth, Options: o, Live: lc, Hub: hc, Telemetry: tel, Addr: s.addr, DemoToken: demoToken,
		Routes: func(query http.Handler) http.Handler { return routes(store, s.production, headers, hosts, query) }}
	if err := app.Open(ctx); err != nil {
		return err
	}
	log.Info("live updates", "nats", map[bool]string{true: "embedded", false: "NATS_URL"}[app.Broker.Embedded()], "retention", lc.MaxAge, "cursorkey", ckeyWhere)
	log.Info("serving", "addr", app.URL+"/", "table", s.table)
	if serving != nil {
		serving(app)
	}
	select {
	case err := <-app.Done():
		_ = app.Close()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	return app.Close()
}

// newMux routes the server's paths around o's /query handler
// (wire.NewHandler), behind the Host check of a server started without
// -addr or -allowed-hosts: see routes.
func newMux(o graph.Options, headers map[string]string) http.Handler {
	hosts, _ := newHostCheck(o.Production, "", "", o.Log)
	return routes(o.Store, o.Production, headers, hosts, wire.NewHandler(o.Store, o.Auth, o))
}

// routes routes the server's paths: /query (GraphQL), GET / (the GraphiQL
// IDE, with headers pre-filled, and its assets under /ide/; not in
// production) and GET /healthz, every one behind the Host check hosts
// (healthz open to any Host).
func routes(store *dynamo.Store, production bool, headers map[string]string, hosts *hostCheck, query http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/query", query)
	if !production {
		mux.Handle("GET /{$}", ide.Page("taskgraph", "/query", headers, ide.Example))
		mux.Handle("GET "+ide.Prefix, ide.Assets())
	}
	mux.HandleFunc("GET "+healthPath, func(w http.ResponseWriter, r *http.Request) {
		c, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := store.Ping(c); err != nil {
			http.Error(w, "table unreachable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return hosts.handler(mux)
}

// awsConfig loads the SDK's own configuration. For a local endpoint
// (AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL) without credentials or
// region (e, from the environment read once) it fills in placeholders, as DynamoDB Local and dynalite accept any.
func awsConfig(ctx context.Context, e awsEnv) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if e.local && !e.region {
		opts = append(opts, config.WithRegion("us-east-1"))
	}
	if e.local && !e.credentials {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	return cfg, nil
}
