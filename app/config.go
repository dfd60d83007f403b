package app

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
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/live"
	"github.com/taskgraph/taskgraph/web"
)

// Config is the server's configuration, read once from the flags and the
// environment (LoadConfig). Open reads nothing else; a test that starts an
// App sets the fields it needs (the zero value of each is its default, or
// unused when the App is given its store and authenticator).
type Config struct {
	Addr         string // -addr, else HOST and PORT: where the API listens (loopback outside production); "": a free loopback port
	AllowedHosts string // -allowed-hosts, else ALLOWED_HOSTS: more names the API answers to (hosts.go)

	Table            string
	StoreKind        string // -store: embedded or aws (auto resolved by LoadConfig)
	Demo             bool   // -demo: the demo data in a new embedded table
	CreateTable      bool
	Debug            bool
	Secret           string // JWT_SECRET
	Production       bool
	TrustedDocuments string          // -trusted-documents: a manifest's path
	TokenTTL         time.Duration   // the longest token lifetime accepted
	Limits           pipeline.Limits // the operations' limits
	MaxBodyBytes     int64           // -max-body: the transports' limit on a request (web.Options)
	DataDir          string          // the embedded store's files and the development secret; "": memory only
	Command          string          // token, export, import or migrate; "": serve
	BackfillRate     int             // a backfill's writes a second (dynamo.Store.BackfillRate)
	Args             []string        // the command's arguments
	LogFormat        string          // text or json
	LogLevel         string          // debug, info, warn or error
	MetricsAddr      string          // -metrics-addr: where GET /metrics listens; "": no metrics
	Live             live.Config     // the broker: NATS_URL (empty: the embedded server), retention, duplicate window, replicas
	Hub              live.HubConfig
	// SyncRetention is how long the change log keeps deletions (sync).
	SyncRetention time.Duration
	JournalSync   string // -journal-sync: commit or off
	CursorKey     string // -cursor-key, else CURSOR_KEY: the live cursors' key; "": derived (cursorkey.go)

	JWKSURL          string // JWT_JWKS_URL: an identity provider's JWK Set
	Issuer, Audience string // JWT_ISSUER, JWT_AUDIENCE
	CORSOrigins      string // CORS_ORIGINS (web.ParseOrigins)

	aws  awsEnv            // what the AWS settings present say (awsConfig)
	otel map[string]string // the OTEL_* variables, for the telemetry
}

// awsEnv is what the AWS variables say to the server: whether any is set
// (-store=auto), whether the endpoint is a local one, and whether a region
// and credentials are given. The SDK reads their values itself.
type awsEnv struct {
	any, local, region, credentials bool
}

// DevTokenLifetime is the default token lifetime outside production: a
// developer's demo token lasts as long as their data does not need a reset.
const DevTokenLifetime = 30 * 24 * time.Hour

// LoadConfig reads the flags in args (before and after a command name)
// into their own FlagSet, and the variables of env (read once, by
// ReadEnv). -h prints the usage (see usage) and returns flag.ErrHelp.
func LoadConfig(args []string, env Env, stderr io.Writer) (Config, error) {
	c := Config{Table: env.or("TABLE_NAME", "task-manager"), Secret: env.get("JWT_SECRET"),
		JWKSURL: env.get("JWT_JWKS_URL"), Issuer: env.get("JWT_ISSUER"), Audience: env.get("JWT_AUDIENCE"),
		CORSOrigins: env.get("CORS_ORIGINS"), otel: map[string]string{}, Live: live.Config{Name: "taskgraph"}}
	for k, v := range env {
		if strings.HasPrefix(k, "OTEL_") {
			c.otel[k] = v
		}
	}
	c.aws = awsEnv{
		local:       env.get("AWS_ENDPOINT_URL_DYNAMODB") != "" || env.get("AWS_ENDPOINT_URL") != "",
		region:      env.get("AWS_REGION") != "" || env.get("AWS_DEFAULT_REGION") != "",
		credentials: env.get("AWS_ACCESS_KEY_ID") != "" || env.get("AWS_PROFILE") != "",
	}
	c.aws.any = c.aws.local || c.aws.region || c.aws.credentials
	fs := flag.NewFlagSet("taskgraph", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(fs) }
	c.define(fs, env)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 { // a command, then its flags and arguments
		c.Command = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return c, err
		}
		c.Args = fs.Args()
	}
	return c, c.resolve(fs, env)
}

// define defines the flags of c on fs. A flag whose default comes from the
// environment (-log-format from LOG_FORMAT, …) has none of its own, so
// that -h says its default once, in its usage: resolve fills it in.
func (c *Config) define(fs *flag.FlagSet, env Env) {
	dataDir, ok := env.lookup("DATA_DIR")
	if !ok {
		dataDir = ".taskgraph"
	}
	fs.StringVar(&c.DataDir, "data-dir", dataDir, "where the embedded store keeps its data and the development secret; empty: memory only")
	fs.StringVar(&c.Addr, "addr", "", "host:port the API listens on (default from HOST and PORT: 127.0.0.1:8080, this machine only; with -production :8080, every interface); 0.0.0.0:8080 opens a development server to the network")
	fs.StringVar(&c.AllowedHosts, "allowed-hosts", "", "comma-separated names the API answers to besides localhost, IP addresses and the machine's name (e.g. dev.example.com, .example.com for it and every name under it; * for any); others get 421 (DNS rebinding); with -production, unset: any (default from ALLOWED_HOSTS)")
	fs.StringVar(&c.StoreKind, "store", "auto", "auto: embedded unless AWS is configured; embedded; or aws")
	fs.BoolVar(&c.Demo, "demo", true, "load demo data into a new embedded table")
	fs.BoolVar(&c.CreateTable, "create-table", true, "create the table and its indexes when missing")
	fs.IntVar(&c.BackfillRate, "backfill-rate", dynamo.DefaultBackfillRate, "the most writes a second a backfill makes (giving existing items a new index's keys: the migrate command, or a start with -create-table)")
	fs.BoolVar(&c.Debug, "debug", false, "add the DynamoDB calls of each operation to its response (extensions.dynamodb); not for production")
	fs.BoolVar(&c.Production, "production", false, "production mode: no introspection, no IDE, no -debug; needs JWT_SECRET or JWT_JWKS_URL")
	fs.StringVar(&c.TrustedDocuments, "trusted-documents", "", "a persisted-documents manifest (JSON): documentId requests run its documents; with -production nothing else runs")
	c.defineLimits(fs)
	fs.StringVar(&c.JournalSync, "journal-sync", "commit", "the embedded store's journal of answered writes: commit (each write flushed to disk before it is answered; writes that wait together share a flush) or off (written to the file, not flushed: a crash of the process loses nothing, a power loss what the system had not written yet, at most the last 2 s of writes: the file is flushed every 2 s)")
	fs.StringVar(&c.LogFormat, "log-format", "", "log lines as text or json (default text, or LOG_FORMAT)")
	fs.StringVar(&c.LogLevel, "log-level", "", "least level logged: debug, info, warn or error (default info, or LOG_LEVEL)")
	fs.StringVar(&c.Live.URL, "nats-url", "", "NATS server or cluster with JetStream for live events, shared by all instances (default from NATS_URL); empty: an embedded server in-process")
	fs.DurationVar(&c.Live.MaxAge, "event-retention", live.DefaultMaxAge, "how long the event stream keeps events for clients that resume (at least 24h)")
	fs.DurationVar(&c.SyncRetention, "sync-retention", dynamo.DefaultSyncRetention, "how long the change log keeps what was deleted, and the oldest sync token accepted (at least 720h: 30 days)")
	fs.DurationVar(&c.Live.DuplicateWindow, "event-dedup-window", live.DefaultDuplicateWindow, "how long the event stream drops a second publication of the same event")
	fs.IntVar(&c.Live.Replicas, "event-replicas", 1, "replicas of the event stream on a NATS cluster (NATS_URL)")
	fs.IntVar(&c.Hub.Buffer, "subscription-buffer", live.DefaultBuffer, "events a subscriber may fall behind before it is cut off (it resumes with its cursor)")
	fs.StringVar(&c.CursorKey, "cursor-key", "", "key of the live events' cursors, base64 or hex, at least 32 bytes, the same on every instance (default from CURSOR_KEY; unset: derived from JWT_SECRET or the development secret; required with -production and JWT_JWKS_URL only)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics at GET /metrics on this address (e.g. :9090), apart from the API; empty: no metrics (default from METRICS_ADDR)")
	fs.DurationVar(&c.TokenTTL, "max-token-lifetime", 0, "longest bearer token lifetime accepted (exp - iat, and exp - now); the demo and token-command tokens get it; default 24h with -production, 720h (30 days) otherwise")
}

// defineLimits defines the flags of the operations' limits (pipeline.Limits)
// and of the body limit.
func (c *Config) defineLimits(fs *flag.FlagSet) {
	l := &c.Limits
	fs.IntVar(&l.ComplexityLimit, "max-complexity", pipeline.DefaultComplexityLimit, "largest query cost (connections count their first)")
	fs.IntVar(&l.MaxDepth, "max-depth", pipeline.DefaultMaxDepth, "most object levels in an operation (edges/node/nodes/pageInfo not counted)")
	fs.IntVar(&l.MaxAliases, "max-aliases", pipeline.DefaultMaxAliases, "most aliased fields in an operation")
	fs.IntVar(&l.MaxTokens, "max-tokens", pipeline.DefaultMaxTokens, "most tokens the parser reads")
	fs.IntVar(&l.MaxNodes, "max-nodes", pipeline.DefaultMaxNodes, "most nodes in a document, each fragment counted every time it is spread")
	fs.IntVar(&l.MaxRepeats, "max-repeats", pipeline.DefaultMaxRepeats, "most fields of one response name merged into one selection set")
	fs.IntVar(&l.MaxFragments, "max-fragments", pipeline.DefaultMaxFragments, "most fragment definitions in a document")
	fs.Int64Var(&c.MaxBodyBytes, "max-body", web.DefaultMaxBodyBytes, "largest request body in bytes (larger: 413)")
	fs.DurationVar(&l.Timeout, "timeout", pipeline.DefaultTimeout, "longest time a request may spend on DynamoDB, retries included")
	fs.DurationVar(&l.HTTPCacheSettle, "http-cache-settle", 0, fmt.Sprintf("how long after a change in a project a GET's answer showing it may have an ETag (docs/caching.md); 0: -timeout plus %v", pipeline.DefaultHTTPCacheSettle))
	for _, f := range l.RateLimits.Flags() { // one pair per rate limit (graph/pipeline/ratelimit.go)
		fs.Float64Var(f.Rate, f.Name, 0, f.Usage)
		fs.IntVar(f.Burst, f.Name+"-burst", 0, f.BurstUsage)
	}
	fs.IntVar(&l.MaxSubscriptionsPerSocket, "max-subscriptions-per-socket", pipeline.DefaultMaxSubscriptionsPerSocket, "most subscriptions on one WebSocket")
	fs.IntVar(&l.MaxSubscriptionsPerViewer, "max-subscriptions-per-viewer", pipeline.DefaultMaxSubscriptionsPerViewer, "most subscriptions of one user on one instance")
	fs.IntVar(&l.MaxSubscriptionComplexity, "max-subscription-complexity", pipeline.DefaultMaxSubscriptionComplexity, "largest cost of a subscription's selection (the -max-complexity measure), paid again for every event")
}

// resolve completes c once fs is parsed: the defaults from env of the
// flags left unset, the store's kind, the address, the defaults that
// depend on -production; and refuses what cannot be served.
func (c *Config) resolve(fs *flag.FlagSet, env Env) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["allowed-hosts"] {
		c.AllowedHosts = env.get("ALLOWED_HOSTS")
	}
	if !set["log-format"] {
		c.LogFormat = env.or("LOG_FORMAT", "text")
	}
	if !set["log-level"] {
		c.LogLevel = env.or("LOG_LEVEL", "info")
	}
	if !set["nats-url"] {
		c.Live.URL = env.get("NATS_URL")
	}
	if !set["metrics-addr"] {
		c.MetricsAddr = env.get("METRICS_ADDR")
	}
	if c.CursorKey == "" { // not the flag's default: -h would print the key
		c.CursorKey = env.get("CURSOR_KEY")
	}
	if c.SyncRetention < dynamo.DefaultSyncRetention {
		return fmt.Errorf("-sync-retention (%s) must be at least %s: sync promises 30 days", c.SyncRetention, dynamo.DefaultSyncRetention)
	}
	c.StoreKind = storeKind(c.StoreKind, c.aws.any)
	if c.Addr == "" {
		host := strings.Trim(env.get("HOST"), "[]")
		if host == "" && !c.Production {
			host = "127.0.0.1" // a development server serves this machine only (hosts.go)
		}
		c.Addr = net.JoinHostPort(host, env.or("PORT", "8080"))
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("-addr must be host:port (127.0.0.1:8080; 0.0.0.0:8080 for every interface), not %q", c.Addr)
	}
	if c.JournalSync != "commit" && c.JournalSync != "off" {
		return fmt.Errorf("-journal-sync must be commit or off, not %q", c.JournalSync)
	}
	if c.Production { // the rate limits are on by default in production only
		rateDefaults(set, &c.Limits.RateLimits)
	}
	if c.TokenTTL == 0 {
		c.TokenTTL = DevTokenLifetime
		if c.Production {
			c.TokenTTL = auth.DefaultMaxTokenLifetime
		}
	}
	return nil
}

// rateDefaults sets the rate limits whose flags are not set to the
// production defaults (pipeline.DefaultRateOps, …). Outside production a
// limit is on only when its flag sets it: a seed script or a frontend's
// end-to-end suite against a development server is never refused.
func rateDefaults(set map[string]bool, r *pipeline.RateLimits) {
	for _, f := range r.Flags() {
		if !set[f.Name] {
			*f.Rate = f.Default
		}
		if !set[f.Name+"-burst"] {
			*f.Burst = f.DefaultBurst
		}
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

// Env is the process environment, read once at start (ReadEnv):
// the server reads no variable anywhere else. usage lists every variable
// read here, and a test holds the list to the code (config_test.go).
type Env map[string]string

// ReadEnv reads the process environment.
func ReadEnv() Env {
	e := Env{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			e[k] = v
		}
	}
	return e
}

// Get returns the variable's value ("" when unset).
func (e Env) Get(name string) string { return e[name] }

func (e Env) get(name string) string { return e[name] }

func (e Env) lookup(name string) (string, bool) {
	v, ok := e[name]
	return v, ok
}

// or returns the variable's value, or def when it is unset or empty.
func (e Env) or(name, def string) string {
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
  migrate      create the indexes the table lacks (waiting until they are
               ACTIVE) and give existing items their keys (a backfill,
               at most -backfill-rate writes a second, resumed where it
               stopped); with the operator's credentials, before the
               servers of a version that reads a new index

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
// ReadEnv's callers read (config_test.go holds the list to the code).
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
