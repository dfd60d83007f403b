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
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
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
	"github.com/taskgraph/taskgraph/live"
)

func main() {
	wire.TuneGC() // GC defaults for a container: GOMEMLIMIT and GOGC override
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskgraph:", err)
		os.Exit(1)
	}
}

// settings are the server's configuration, from flags and the environment.
type settings struct {
	addr         string // -addr, else HOST and PORT: where the API listens (loopback outside production)
	allowedHosts string // -allowed-hosts, else ALLOWED_HOSTS: more names the API answers to (hosts.go)

	table       string
	store       string // auto, embedded or aws
	demo        bool
	createTable bool
	debug       bool
	secret      string
	production  bool
	trusted     string        // -trusted-documents
	tokenTTL    time.Duration // the longest token lifetime accepted
	limits      graph.Options // the limits only
	dataDir     string        // the embedded store's files and the development secret; "": memory only
	command     string        // token, export or import; "": serve
	logFormat   string        // text or json
	logLevel    string        // debug, info, warn or error
	metricsAddr string        // -metrics-addr: where GET /metrics listens; "": no metrics
	args        []string      // the command's arguments
	natsURL     string        // NATS_URL; "": the embedded NATS server
	live        live.Config   // retention and duplicate window
	// syncRetention is how long the change log keeps deletions (sync).
	syncRetention time.Duration
	liveHub       live.HubConfig
	journalSync   string // -journal-sync: commit or off
	cursorKey     string // -cursor-key, else CURSOR_KEY: the live cursors' key; "": derived (cursorKey)
}

// devTokenLifetime is the default token lifetime outside production: a
// developer's demo token lasts as long as their data does not need a reset.
const devTokenLifetime = 30 * 24 * time.Hour

// loadSettings reads the flags in args (before and after a command name)
// and the environment. -h prints the usage (see usage) and returns
// flag.ErrHelp.
func loadSettings(args []string, stderr io.Writer) (settings, error) {
	s := settings{table: env("TABLE_NAME", "task-manager"), secret: os.Getenv("JWT_SECRET")}
	flag.CommandLine = flag.NewFlagSet("taskgraph", flag.ContinueOnError)
	flag.CommandLine.SetOutput(stderr)
	flag.CommandLine.Usage = func() { usage(flag.CommandLine) }
	dataDir, ok := os.LookupEnv("DATA_DIR")
	if !ok {
		dataDir = ".taskgraph"
	}
	flag.StringVar(&s.dataDir, "data-dir", dataDir, "where the embedded store keeps its data and the development secret; empty: memory only")
	flag.StringVar(&s.addr, "addr", "", "host:port the API listens on (default from HOST and PORT: 127.0.0.1:8080, this machine only; with -production :8080, every interface); 0.0.0.0:8080 opens a development server to the network")
	flag.StringVar(&s.allowedHosts, "allowed-hosts", os.Getenv("ALLOWED_HOSTS"), "comma-separated names the API answers to besides localhost, IP addresses and the machine's name (e.g. dev.example.com, .example.com for it and every name under it; * for any); others get 421 (DNS rebinding); with -production, unset: any (default from ALLOWED_HOSTS)")
	flag.StringVar(&s.store, "store", "auto", "auto: embedded unless AWS is configured; embedded; or aws")
	flag.BoolVar(&s.demo, "demo", true, "load demo data into a new embedded table")
	flag.BoolVar(&s.createTable, "create-table", true, "create the table and its indexes when missing")
	flag.BoolVar(&s.debug, "debug", false, "add the DynamoDB calls of each operation to its response (extensions.dynamodb); not for production")
	flag.BoolVar(&s.production, "production", false, "production mode: no introspection, no IDE, no -debug; needs JWT_SECRET or JWT_JWKS_URL")
	flag.StringVar(&s.trusted, "trusted-documents", "", "a persisted-documents manifest (JSON): documentId requests run its documents; with -production nothing else runs")
	flag.IntVar(&s.limits.ComplexityLimit, "max-complexity", graph.DefaultComplexityLimit, "largest query cost (connections count their first)")
	flag.IntVar(&s.limits.MaxDepth, "max-depth", graph.DefaultMaxDepth, "most object levels in an operation (edges/node/nodes/pageInfo not counted)")
	flag.IntVar(&s.limits.MaxAliases, "max-aliases", graph.DefaultMaxAliases, "most aliased fields in an operation")
	flag.IntVar(&s.limits.MaxTokens, "max-tokens", graph.DefaultMaxTokens, "most tokens the parser reads")
	flag.IntVar(&s.limits.MaxNodes, "max-nodes", graph.DefaultMaxNodes, "most nodes in a document, each fragment counted every time it is spread")
	flag.IntVar(&s.limits.MaxRepeats, "max-repeats", graph.DefaultMaxRepeats, "most fields of one response name merged into one selection set")
	flag.IntVar(&s.limits.MaxFragments, "max-fragments", graph.DefaultMaxFragments, "most fragment definitions in a document")
	flag.Int64Var(&s.limits.MaxBodyBytes, "max-body", graph.DefaultMaxBodyBytes, "largest request body in bytes (larger: 413)")
	flag.DurationVar(&s.limits.Timeout, "timeout", graph.DefaultTimeout, "longest time a request may spend on DynamoDB, retries included")
	flag.Float64Var(&s.limits.RateOps, "rate-ops", 0, fmt.Sprintf("operations per second per viewer (per client address without a valid token); 0: no limit (default %v with -production, no limit otherwise)", graph.DefaultRateOps))
	flag.IntVar(&s.limits.RateOpsBurst, "rate-ops-burst", 0, fmt.Sprintf("operations a viewer may send at once (default %d with -production, twice -rate-ops otherwise)", graph.DefaultRateOpsBurst))
	flag.Float64Var(&s.limits.RateCost, "rate-cost", 0, fmt.Sprintf("query cost per second per viewer (the -max-complexity measure); 0: no limit (default %v with -production, no limit otherwise)", graph.DefaultRateCost))
	flag.IntVar(&s.limits.RateCostBurst, "rate-cost-burst", 0, fmt.Sprintf("query cost a viewer may spend at once (default %d with -production, twice -rate-cost otherwise)", graph.DefaultRateCostBurst))
	flag.StringVar(&s.journalSync, "journal-sync", "commit", "the embedded store's journal of answered writes: commit (each write flushed to disk before it is answered; writes that wait together share a flush) or off (written to the file, not flushed: a crash of the process loses nothing, a power loss what the system had not written yet, at most the last 2 s of writes: the file is flushed every 2 s)")
	flag.StringVar(&s.logFormat, "log-format", env("LOG_FORMAT", "text"), "log lines as text or json (default from LOG_FORMAT)")
	flag.StringVar(&s.logLevel, "log-level", env("LOG_LEVEL", "info"), "least level logged: debug, info, warn or error (default from LOG_LEVEL)")
	flag.StringVar(&s.natsURL, "nats-url", os.Getenv("NATS_URL"), "NATS server or cluster with JetStream for live events, shared by all instances (default from NATS_URL); empty: an embedded server in-process")
	flag.DurationVar(&s.live.MaxAge, "event-retention", live.DefaultMaxAge, "how long the event stream keeps events for clients that resume (at least 24h)")
	flag.DurationVar(&s.syncRetention, "sync-retention", dynamo.DefaultSyncRetention, "how long the change log keeps what was deleted, and the oldest sync token accepted (at least 720h: 30 days)")
	flag.DurationVar(&s.live.DuplicateWindow, "event-dedup-window", live.DefaultDuplicateWindow, "how long the event stream drops a second publication of the same event")
	flag.IntVar(&s.live.Replicas, "event-replicas", 1, "replicas of the event stream on a NATS cluster (NATS_URL)")
	flag.IntVar(&s.liveHub.Buffer, "subscription-buffer", live.DefaultBuffer, "events a subscriber may fall behind before it is cut off (it resumes with its cursor)")
	flag.StringVar(&s.cursorKey, "cursor-key", "", "key of the live events' cursors, base64 or hex, at least 32 bytes, the same on every instance (default from CURSOR_KEY; unset: derived from JWT_SECRET or the development secret; required with -production and JWT_JWKS_URL only)")
	flag.IntVar(&s.limits.MaxSubscriptionsPerSocket, "max-subscriptions-per-socket", graph.DefaultMaxSubscriptionsPerSocket, "most subscriptions on one WebSocket")
	flag.IntVar(&s.limits.MaxSubscriptionsPerViewer, "max-subscriptions-per-viewer", graph.DefaultMaxSubscriptionsPerViewer, "most subscriptions of one user on one instance")
	flag.IntVar(&s.limits.MaxSubscriptionComplexity, "max-subscription-complexity", graph.DefaultMaxSubscriptionComplexity, "largest cost of a subscription's selection (the -max-complexity measure), paid again for every event")
	flag.StringVar(&s.metricsAddr, "metrics-addr", env("METRICS_ADDR", ""), "serve Prometheus metrics at GET /metrics on this address (e.g. :9090), apart from the API; empty: no metrics (default from METRICS_ADDR)")
	flag.DurationVar(&s.tokenTTL, "max-token-lifetime", 0, "longest bearer token lifetime accepted (exp - iat, and exp - now); the demo and token-command tokens get it; default 24h with -production, 720h (30 days) otherwise")
	if err := flag.CommandLine.Parse(args); err != nil {
		return s, err
	}
	if flag.NArg() > 0 { // a command, then its flags and arguments
		s.command = flag.Arg(0)
		if err := flag.CommandLine.Parse(flag.Args()[1:]); err != nil {
			return s, err
		}
		s.args = flag.Args()
	}
	if s.syncRetention < dynamo.DefaultSyncRetention {
		return s, fmt.Errorf("-sync-retention (%s) must be at least %s: sync promises 30 days", s.syncRetention, dynamo.DefaultSyncRetention)
	}
	s.store = storeKind(s.store)
	if s.addr == "" {
		host := strings.Trim(os.Getenv("HOST"), "[]")
		if host == "" && !s.production {
			host = "127.0.0.1" // a development server serves this machine only (hosts.go)
		}
		s.addr = net.JoinHostPort(host, env("PORT", "8080"))
	}
	if _, _, err := net.SplitHostPort(s.addr); err != nil {
		return s, fmt.Errorf("-addr must be host:port (127.0.0.1:8080; 0.0.0.0:8080 for every interface), not %q", s.addr)
	}
	if s.journalSync != "commit" && s.journalSync != "off" {
		return s, fmt.Errorf("-journal-sync must be commit or off, not %q", s.journalSync)
	}
	if s.production { // the rate limits are on by default in production only
		rateDefaults(flag.CommandLine, &s.limits.RateLimits)
	}
	if s.cursorKey == "" { // not the flag's default: -h would print the key
		s.cursorKey = os.Getenv("CURSOR_KEY")
	}
	if s.tokenTTL == 0 {
		s.tokenTTL = devTokenLifetime
		if s.production {
			s.tokenTTL = graph.DefaultMaxTokenLifetime
		}
	}
	return s, nil
}

// rateDefaults sets the rate limits that fs's flags left unset to the
// production defaults (graph.DefaultRateOps, …). Outside production a
// limit is on only when its flag sets it: a seed script or a frontend's
// end-to-end suite against a development server is never refused.
func rateDefaults(fs *flag.FlagSet, r *graph.RateLimits) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["rate-ops"] {
		r.RateOps = graph.DefaultRateOps
	}
	if !set["rate-ops-burst"] {
		r.RateOpsBurst = graph.DefaultRateOpsBurst
	}
	if !set["rate-cost"] {
		r.RateCost = graph.DefaultRateCost
	}
	if !set["rate-cost-burst"] {
		r.RateCostBurst = graph.DefaultRateCostBurst
	}
}

// storeKind resolves -store=auto: embedded unless any AWS setting is present.
func storeKind(flagValue string) string {
	if flagValue != "auto" {
		return flagValue
	}
	for _, v := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_PROFILE", "AWS_ACCESS_KEY_ID"} {
		if os.Getenv(v) != "" {
			return "aws"
		}
	}
	return "embedded"
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// run runs the server, or the command named in args, until ctx ends.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return runServing(ctx, args, stdin, stdout, stderr, nil)
}

// runServing is run that hands the started instance to serving (when not
// nil) once it serves: its URL and demo token are fields of the App.
func runServing(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, serving func(*wire.App)) (err error) {
	s, err := loadSettings(args, stderr)
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
	jwksURL := os.Getenv("JWT_JWKS_URL")
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
	origins, err := graph.ParseOrigins(os.Getenv("CORS_ORIGINS"))
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
	auth := &graph.Authenticator{Secret: []byte(s.secret), Issuer: os.Getenv("JWT_ISSUER"), Audience: os.Getenv("JWT_AUDIENCE"),
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
// region it fills in placeholders, as DynamoDB Local and dynalite accept any.
func awsConfig(ctx context.Context) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	local := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
	if local && os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		opts = append(opts, config.WithRegion("us-east-1"))
	}
	if local && os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	return cfg, nil
}
