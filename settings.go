package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

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
	limits      web.Options   // the limits only
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

	jwksURL          string            // JWT_JWKS_URL: an identity provider's JWK Set
	issuer, audience string            // JWT_ISSUER, JWT_AUDIENCE
	corsOrigins      string            // CORS_ORIGINS (web.ParseOrigins)
	aws              awsEnv            // what the AWS settings present say (awsConfig)
	otel             map[string]string // the OTEL_* variables, for the telemetry
}

// awsEnv is what the AWS variables say to the server: whether any is set
// (-store=auto), whether the endpoint is a local one, and whether a region
// and credentials are given. The SDK reads their values itself.
type awsEnv struct {
	any, local, region, credentials bool
}

// devTokenLifetime is the default token lifetime outside production: a
// developer's demo token lasts as long as their data does not need a reset.
const devTokenLifetime = 30 * 24 * time.Hour

// loadSettings reads the flags in args (before and after a command name)
// into their own FlagSet, and the variables of env (read once, by
// readEnv). -h prints the usage (see usage) and returns flag.ErrHelp.
func loadSettings(args []string, env environment, stderr io.Writer) (settings, error) {
	s := settings{table: env.or("TABLE_NAME", "task-manager"), secret: env.get("JWT_SECRET"),
		jwksURL: env.get("JWT_JWKS_URL"), issuer: env.get("JWT_ISSUER"), audience: env.get("JWT_AUDIENCE"),
		corsOrigins: env.get("CORS_ORIGINS"), otel: map[string]string{}}
	for k, v := range env {
		if strings.HasPrefix(k, "OTEL_") {
			s.otel[k] = v
		}
	}
	s.aws = awsEnv{
		local:       env.get("AWS_ENDPOINT_URL_DYNAMODB") != "" || env.get("AWS_ENDPOINT_URL") != "",
		region:      env.get("AWS_REGION") != "" || env.get("AWS_DEFAULT_REGION") != "",
		credentials: env.get("AWS_ACCESS_KEY_ID") != "" || env.get("AWS_PROFILE") != "",
	}
	s.aws.any = s.aws.local || s.aws.region || s.aws.credentials
	fs := flag.NewFlagSet("taskgraph", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(fs) }
	dataDir, ok := env.lookup("DATA_DIR")
	if !ok {
		dataDir = ".taskgraph"
	}
	fs.StringVar(&s.dataDir, "data-dir", dataDir, "where the embedded store keeps its data and the development secret; empty: memory only")
	fs.StringVar(&s.addr, "addr", "", "host:port the API listens on (default from HOST and PORT: 127.0.0.1:8080, this machine only; with -production :8080, every interface); 0.0.0.0:8080 opens a development server to the network")
	fs.StringVar(&s.allowedHosts, "allowed-hosts", env.get("ALLOWED_HOSTS"), "comma-separated names the API answers to besides localhost, IP addresses and the machine's name (e.g. dev.example.com, .example.com for it and every name under it; * for any); others get 421 (DNS rebinding); with -production, unset: any (default from ALLOWED_HOSTS)")
	fs.StringVar(&s.store, "store", "auto", "auto: embedded unless AWS is configured; embedded; or aws")
	fs.BoolVar(&s.demo, "demo", true, "load demo data into a new embedded table")
	fs.BoolVar(&s.createTable, "create-table", true, "create the table and its indexes when missing")
	fs.BoolVar(&s.debug, "debug", false, "add the DynamoDB calls of each operation to its response (extensions.dynamodb); not for production")
	fs.BoolVar(&s.production, "production", false, "production mode: no introspection, no IDE, no -debug; needs JWT_SECRET or JWT_JWKS_URL")
	fs.StringVar(&s.trusted, "trusted-documents", "", "a persisted-documents manifest (JSON): documentId requests run its documents; with -production nothing else runs")
	fs.IntVar(&s.limits.ComplexityLimit, "max-complexity", graph.DefaultComplexityLimit, "largest query cost (connections count their first)")
	fs.IntVar(&s.limits.MaxDepth, "max-depth", graph.DefaultMaxDepth, "most object levels in an operation (edges/node/nodes/pageInfo not counted)")
	fs.IntVar(&s.limits.MaxAliases, "max-aliases", graph.DefaultMaxAliases, "most aliased fields in an operation")
	fs.IntVar(&s.limits.MaxTokens, "max-tokens", graph.DefaultMaxTokens, "most tokens the parser reads")
	fs.IntVar(&s.limits.MaxNodes, "max-nodes", graph.DefaultMaxNodes, "most nodes in a document, each fragment counted every time it is spread")
	fs.IntVar(&s.limits.MaxRepeats, "max-repeats", graph.DefaultMaxRepeats, "most fields of one response name merged into one selection set")
	fs.IntVar(&s.limits.MaxFragments, "max-fragments", graph.DefaultMaxFragments, "most fragment definitions in a document")
	fs.Int64Var(&s.limits.MaxBodyBytes, "max-body", web.DefaultMaxBodyBytes, "largest request body in bytes (larger: 413)")
	fs.DurationVar(&s.limits.Timeout, "timeout", graph.DefaultTimeout, "longest time a request may spend on DynamoDB, retries included")
	fs.Float64Var(&s.limits.RateOps, "rate-ops", 0, fmt.Sprintf("operations per second per viewer (per client address without a valid token); 0: no limit (default %v with -production, no limit otherwise)", graph.DefaultRateOps))
	fs.IntVar(&s.limits.RateOpsBurst, "rate-ops-burst", 0, fmt.Sprintf("operations a viewer may send at once (default %d with -production, twice -rate-ops otherwise)", graph.DefaultRateOpsBurst))
	fs.Float64Var(&s.limits.RateCost, "rate-cost", 0, fmt.Sprintf("query cost per second per viewer (the -max-complexity measure); 0: no limit (default %v with -production, no limit otherwise)", graph.DefaultRateCost))
	fs.IntVar(&s.limits.RateCostBurst, "rate-cost-burst", 0, fmt.Sprintf("query cost a viewer may spend at once (default %d with -production, twice -rate-cost otherwise)", graph.DefaultRateCostBurst))
	fs.StringVar(&s.journalSync, "journal-sync", "commit", "the embedded store's journal of answered writes: commit (each write flushed to disk before it is answered; writes that wait together share a flush) or off (written to the file, not flushed: a crash of the process loses nothing, a power loss what the system had not written yet, at most the last 2 s of writes: the file is flushed every 2 s)")
	fs.StringVar(&s.logFormat, "log-format", env.or("LOG_FORMAT", "text"), "log lines as text or json (default from LOG_FORMAT)")
	fs.StringVar(&s.logLevel, "log-level", env.or("LOG_LEVEL", "info"), "least level logged: debug, info, warn or error (default from LOG_LEVEL)")
	fs.StringVar(&s.natsURL, "nats-url", env.get("NATS_URL"), "NATS server or cluster with JetStream for live events, shared by all instances (default from NATS_URL); empty: an embedded server in-process")
	fs.DurationVar(&s.live.MaxAge, "event-retention", live.DefaultMaxAge, "how long the event stream keeps events for clients that resume (at least 24h)")
	fs.DurationVar(&s.syncRetention, "sync-retention", dynamo.DefaultSyncRetention, "how long the change log keeps what was deleted, and the oldest sync token accepted (at least 720h: 30 days)")
	fs.DurationVar(&s.live.DuplicateWindow, "event-dedup-window", live.DefaultDuplicateWindow, "how long the event stream drops a second publication of the same event")
	fs.IntVar(&s.live.Replicas, "event-replicas", 1, "replicas of the event stream on a NATS cluster (NATS_URL)")
	fs.IntVar(&s.liveHub.Buffer, "subscription-buffer", live.DefaultBuffer, "events a subscriber may fall behind before it is cut off (it resumes with its cursor)")
	fs.StringVar(&s.cursorKey, "cursor-key", "", "key of the live events' cursors, base64 or hex, at least 32 bytes, the same on every instance (default from CURSOR_KEY; unset: derived from JWT_SECRET or the development secret; required with -production and JWT_JWKS_URL only)")
	fs.IntVar(&s.limits.MaxSubscriptionsPerSocket, "max-subscriptions-per-socket", graph.DefaultMaxSubscriptionsPerSocket, "most subscriptions on one WebSocket")
	fs.IntVar(&s.limits.MaxSubscriptionsPerViewer, "max-subscriptions-per-viewer", graph.DefaultMaxSubscriptionsPerViewer, "most subscriptions of one user on one instance")
	fs.IntVar(&s.limits.MaxSubscriptionComplexity, "max-subscription-complexity", graph.DefaultMaxSubscriptionComplexity, "largest cost of a subscription's selection (the -max-complexity measure), paid again for every event")
	fs.StringVar(&s.metricsAddr, "metrics-addr", env.get("METRICS_ADDR"), "serve Prometheus metrics at GET /metrics on this address (e.g. :9090), apart from the API; empty: no metrics (default from METRICS_ADDR)")
	fs.DurationVar(&s.tokenTTL, "max-token-lifetime", 0, "longest bearer token lifetime accepted (exp - iat, and exp - now); the demo and token-command tokens get it; default 24h with -production, 720h (30 days) otherwise")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if fs.NArg() > 0 { // a command, then its flags and arguments
		s.command = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return s, err
		}
		s.args = fs.Args()
	}
	if s.syncRetention < dynamo.DefaultSyncRetention {
		return s, fmt.Errorf("-sync-retention (%s) must be at least %s: sync promises 30 days", s.syncRetention, dynamo.DefaultSyncRetention)
	}
	s.store = storeKind(s.store, s.aws.any)
	if s.addr == "" {
		host := strings.Trim(env.get("HOST"), "[]")
		if host == "" && !s.production {
			host = "127.0.0.1" // a development server serves this machine only (hosts.go)
		}
		s.addr = net.JoinHostPort(host, env.or("PORT", "8080"))
	}
	if _, _, err := net.SplitHostPort(s.addr); err != nil {
		return s, fmt.Errorf("-addr must be host:port (127.0.0.1:8080; 0.0.0.0:8080 for every interface), not %q", s.addr)
	}
	if s.journalSync != "commit" && s.journalSync != "off" {
		return s, fmt.Errorf("-journal-sync must be commit or off, not %q", s.journalSync)
	}
	if s.production { // the rate limits are on by default in production only
		rateDefaults(fs, &s.limits.RateLimits)
	}
	if s.cursorKey == "" { // not the flag's default: -h would print the key
		s.cursorKey = env.get("CURSOR_KEY")
	}
	if s.tokenTTL == 0 {
		s.tokenTTL = devTokenLifetime
		if s.production {
			s.tokenTTL = auth.DefaultMaxTokenLifetime
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

// storeKind resolves -store=auto: embedded unless any AWS setting is
// present (awsSet).
func storeKind(flagValue string, awsSet bool) string {
	if flagValue != "auto" {
		return flagValue
	}
	if awsSet {
		return "aws"
	}
	return "embedded"
}

// environment is the process environment, read once at start (readEnv):
// the server reads no variable anywhere else. usage lists every variable
// read here, and a test holds the list to the code (settings_test.go).
type environment map[string]string

// readEnv reads the process environment.
func readEnv() environment {
	e := environment{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			e[k] = v
		}
	}
	return e
}

func (e environment) get(name string) string { return e[name] }

func (e environment) lookup(name string) (string, bool) {
	v, ok := e[name]
	return v, ok
}

// or returns the variable's value, or def when it is unset or empty.
func (e environment) or(name, def string) string {
	if v := e[name]; v != "" {
		return v
	}
	return def
}

// usage prints -h: the commands, the flags and the environment variables.
func usage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `Usage: taskgraph [flags] [command]

Serves the task-manager GraphQL API (POST /query, the GraphQL IDE at /,
GET /healthz) on -addr: 127.0.0.1:8080 (this machine only) by default, :8080
with -production. With no AWS configuration the data lives in an embedded
store, kept in -data-dir across restarts.

Commands:
  token USER   print a bearer token (-max-token-lifetime: 30 days outside production) for USER, signed with JWT_SECRET
               or the development secret in -data-dir
  export       write every item of the table to stdout (JSON lines)
  import       read items written by export from stdin into the table
               (export from the embedded store, import with
               AWS_ENDPOINT_URL_DYNAMODB set: moves the data to DynamoDB;
               on -data-dir, with no server running there: one process
               holds a data directory at a time)

Flags:
`)
	fs.PrintDefaults()
	fmt.Fprint(w, "\nEnvironment (read once at start):\n")
	for _, v := range envHelp {
		line := fmt.Sprintf("  %-26s %s\n", v[0], strings.ReplaceAll(v[1], "\n", "\n"+strings.Repeat(" ", 29)))
		fmt.Fprint(w, strings.ReplaceAll(line, " \n", "\n"))
	}
}

// envHelp is -h's list of the variables the server reads: every one that
// readEnv's callers read (settings_test.go holds the list to the code).
var envHelp = [][2]string{
	{"PORT", "HTTP port (default 8080)"},
	{"HOST", "the host -addr listens on (default 127.0.0.1, loopback only;\nevery interface with -production; 0.0.0.0: every interface)"},
	{"ALLOWED_HOSTS", "the default of -allowed-hosts"},
	{"TABLE_NAME", "the DynamoDB table (default task-manager)"},
	{"DATA_DIR", "the default of -data-dir (set but empty: memory only)"},
	{"LOG_FORMAT, LOG_LEVEL", "the defaults of -log-format and -log-level"},
	{"METRICS_ADDR", "the default of -metrics-addr"},
	{"JWT_SECRET", "HS256 secret for bearer tokens; unset: the development\nsecret in -data-dir (made on first start)"},
	{"JWT_JWKS_URL", "an identity provider's JWK Set for asymmetric tokens"},
	{"JWT_ISSUER, JWT_AUDIENCE", "the iss / aud tokens must carry"},
	{"CURSOR_KEY", "the default of -cursor-key: the key of the live events'\ncursors (base64 or hex, at least 32 bytes); unset: derived\nfrom JWT_SECRET or the development secret; needed with\n-production when only JWT_JWKS_URL is set"},
	{"CORS_ORIGINS", "comma-separated origins whose browser pages may call /query\n(e.g. https://app.example.com); unset or *: any origin\n(no credentials either way; docs/security.md)"},
	{"NATS_URL", "the default of -nats-url: a NATS server or cluster with\nJetStream that carries live events between instances"},
	{"AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL, AWS_REGION, AWS_DEFAULT_REGION,\n  AWS_PROFILE, AWS_ACCESS_KEY_ID", "\nany of them: use DynamoDB through the AWS SDK's own\nconfiguration (it reads its AWS_* variables itself) instead\nof the embedded store (-store=auto)"},
	{"OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT,\n  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "\ntracing on: otlp or console, or an OTLP endpoint\n(docs/operations.md); off by default"},
	{"OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "\nthe OTLP protocol: http/protobuf (the default; grpc is not built in)"},
	{"OTEL_SDK_DISABLED", "true: no tracing whatever the other OTEL_* say"},
	{"OTEL_*", "the OpenTelemetry SDK's other standard variables (sampler,\nresource, OTLP headers, …), read by the SDK itself"},
	{"GOMEMLIMIT, GOGC", "the garbage collector's limit and percentage; unset: 75%\nof the container's memory and 400 (docs/operations.md)"},
}
