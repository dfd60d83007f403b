// Command taskgraph serves the task-manager GraphQL API. With no AWS
// configuration it runs on an embedded in-process store with demo data; see
// README.md for the settings.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/ide"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "taskgraph:", err)
		os.Exit(1)
	}
}

// settings are the server's configuration, from flags and the environment.
type settings struct {
	port        string
	table       string
	store       string // auto, embedded or aws
	demo        bool
	createTable bool
	debug       bool
	secret      string
	production  bool
	limits      graph.Options // the limits only
}

func loadSettings() settings {
	s := settings{port: env("PORT", "8080"), table: env("TABLE_NAME", "task-manager"), secret: os.Getenv("JWT_SECRET")}
	flag.StringVar(&s.store, "store", "auto", "auto: embedded unless AWS is configured; embedded; or aws")
	flag.BoolVar(&s.demo, "demo", true, "load demo data into a new embedded table")
	flag.BoolVar(&s.createTable, "create-table", true, "create the table and its indexes when missing")
	flag.BoolVar(&s.debug, "debug", false, "add the DynamoDB calls of each operation to its response (extensions.dynamodb); not for production")
	flag.BoolVar(&s.production, "production", false, "production mode: no introspection, no IDE, no -debug, JWT_SECRET required")
	flag.IntVar(&s.limits.ComplexityLimit, "max-complexity", graph.DefaultComplexityLimit, "largest query cost (connections count their first)")
	flag.IntVar(&s.limits.MaxDepth, "max-depth", graph.DefaultMaxDepth, "most object levels in an operation (edges/node/nodes/pageInfo not counted)")
	flag.IntVar(&s.limits.MaxAliases, "max-aliases", graph.DefaultMaxAliases, "most aliased fields in an operation")
	flag.IntVar(&s.limits.MaxTokens, "max-tokens", graph.DefaultMaxTokens, "most tokens the parser reads")
	flag.Int64Var(&s.limits.MaxBodyBytes, "max-body", graph.DefaultMaxBodyBytes, "largest request body in bytes (larger: 413)")
	flag.DurationVar(&s.limits.Timeout, "timeout", graph.DefaultTimeout, "longest time a request may spend on DynamoDB, retries included")
	flag.Parse()
	s.store = storeKind(s.store)
	return s
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

func run() error {
	s := loadSettings()
	jwksURL := os.Getenv("JWT_JWKS_URL")
	if s.production && ((s.secret == "" && jwksURL == "") || s.debug) {
		return errors.New("-production needs JWT_SECRET or JWT_JWKS_URL and refuses -debug")
	}
	origins, err := graph.ParseOrigins(os.Getenv("CORS_ORIGINS"))
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var db *dynamodb.Client
	switch s.store {
	case "embedded":
		emb, err := dynamo.StartEmbedded()
		if err != nil {
			return fmt.Errorf("starting the embedded store: %w", err)
		}
		defer func() { _ = emb.Close() }()
		db = emb.Client(dynamo.CountCalls, dynamo.Deadlines, dynamo.TuneHTTP, dynamo.RetryPolicy(5, 2*time.Second))
		log.Info("using the embedded in-process store; data lives as long as the process")
	case "aws":
		cfg, err := awsConfig(ctx)
		if err != nil {
			return err
		}
		db = dynamodb.NewFromConfig(cfg, dynamo.CountCalls, dynamo.Deadlines, dynamo.TuneHTTP, dynamo.RetryPolicy(5, 2*time.Second))
		log.Info("using DynamoDB", "region", cfg.Region)
	default:
		return fmt.Errorf("-store must be auto, embedded or aws, not %q", s.store)
	}

	store := dynamo.New(db, s.table)
	store.Log = log
	created := false
	if s.createTable {
		var err error
		tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		created, err = store.EnsureTable(tctx)
		cancel()
		if err != nil {
			return fmt.Errorf("table %s: %w", s.table, err)
		}
	}
	if created && s.demo && s.store == "embedded" {
		if err := store.Import(ctx, store.Demo(time.Now())); err != nil {
			return fmt.Errorf("loading demo data: %w", err)
		}
		log.Info("loaded demo data", "users", "alice bob carol dave")
	}
	go store.RunCleanupWorker(ctx, time.Minute)

	auth := &graph.Authenticator{Secret: []byte(s.secret), Issuer: os.Getenv("JWT_ISSUER"), Audience: os.Getenv("JWT_AUDIENCE")}
	if jwksURL != "" {
		kf, err := keyfunc.NewDefaultCtx(ctx, []string{jwksURL}) // cached, refreshed hourly and on an unknown kid
		if err != nil {
			return fmt.Errorf("JWT_JWKS_URL: %w", err)
		}
		auth.JWKS = kf.Keyfunc
	}
	headers := map[string]string{}
	if s.secret == "" && jwksURL == "" {
		var b [32]byte
		_, _ = rand.Read(b[:])
		auth.Secret = []byte(hex.EncodeToString(b[:]))
		tok, err := auth.Sign("alice", 30*24*time.Hour)
		if err != nil {
			return err
		}
		headers["Authorization"] = "Bearer " + tok
		fmt.Printf("\nJWT_SECRET is not set: made a random one. A token for the demo user alice (valid 30 days):\n\n  Authorization: Bearer %s\n\nThe GraphQL IDE at http://localhost:%s/ has it filled in.\n\n", tok, s.port)
	}

	o := s.limits
	o.Store, o.Auth, o.Log, o.Debug, o.Production, o.CORS = store, auth, log, s.debug, s.production, origins
	mux := newMux(o, headers)
	ln, err := net.Listen("tcp", ":"+s.port)
	if err != nil {
		return err
	}
	log.Info("serving", "addr", fmt.Sprintf("http://localhost:%d/", ln.Addr().(*net.TCPAddr).Port), "table", s.table)
	return serve(ctx, ln, mux, 15*time.Second, log)
}

// serve serves h on ln until ctx ends, then shuts down gracefully: new
// connections are refused at once, requests in flight get up to grace to
// finish (their mutations are single transactions, so none is half-written
// either way).
func serve(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration, log *slog.Logger) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newMux routes the server's paths: POST /query (GraphQL), GET / (the
// GraphiQL IDE, with headers pre-filled, and its assets under /ide/) and
// GET /healthz.
func newMux(o graph.Options, headers map[string]string) *http.ServeMux {
	store := o.Store
	mux := http.NewServeMux()
	mux.Handle("/query", graph.NewHandler(o))
	if !o.Production {
		mux.Handle("GET /{$}", ide.Page("taskgraph", "/query", headers))
		mux.Handle("GET "+ide.Prefix, ide.Assets())
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		c, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := store.Ping(c); err != nil {
			http.Error(w, "table unreachable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
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
