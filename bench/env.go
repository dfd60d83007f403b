package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/loaders"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/web"
)

// Mode is a loader configuration under test.
type Mode struct {
	Name    string
	Loaders loaders.Config
}

// The two modes the report compares: the server as configured in
// production (batches dispatched by level), and the baseline in which every
// resolver reads on its own; and the batch window that dispatch by level
// replaced (BenchmarkDispatch compares their CPU).
var (
	Batched   = Mode{Name: "batching on", Loaders: loaders.Config{}}
	Unbatched = Mode{Name: "batching off", Loaders: loaders.Config{NoBatch: true}}
	Windowed  = Mode{Name: "batching by window", Loaders: loaders.Config{Wait: loaders.DefaultBatchWait}}
)

// BatchWait is the loaders' batch window in mode m: the configured Wait
// with a window; none dispatched by level (a level's batches leave when
// its last field has asked) or with batching off (every read leaves at
// once).
func (m Mode) BatchWait() time.Duration {
	if m.Loaders.NoBatch {
		return 0
	}
	return m.Loaders.Wait
}

// Secret signs the viewer's token.
const Secret = "bench-secret"

// Env is the server under test: a dynamo.Store on one table of a DynamoDB
// endpoint, its client wired as in production (client.Options) plus a
// Gate around the HTTP client and a Counter of calls, and the real GraphQL
// handler (app.NewHandler) in front.
type Env struct {
	Client  *dynamodb.Client
	Store   *dynamo.Store
	Gate    *Gate
	Calls   *Counter
	Fixture *Fixture

	auth   *auth.Authenticator
	header string // the viewer's Authorization header
	log    *slog.Logger
	live   []*dynamo.Store // the live instances' stores (LiveHandler)
	// liveTel is the last live instance's telemetry, its metrics on
	// (FanOuts).
	liveTel *telemetry.Telemetry
}

// Open connects to the endpoint and makes sure the table exists. quiet is
// the gate's quiet window (0: DefaultQuiet). Close it when done.
//
// The client is made as embedded.Store.Client makes the server's (region
// us-east-1, placeholder credentials, no SDK logger), unless AWS_REGION or
// AWS credentials are set, which are then used.
func Open(ctx context.Context, endpoint, table string, quiet time.Duration) (*Env, error) {
	opts, err := clientOptions(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	e := &Env{Calls: NewCounter(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	gate := func(o *dynamodb.Options) {
		e.Gate = NewGate(o.HTTPClient, quiet)
		o.HTTPClient = e.Gate.Client()
	}
	e.Client = dynamodb.New(opts, client.Options(gate, e.Calls.Option)...)
	e.Store = app.NewStore(e.Client, table, e.log, func() time.Time { return Now })
	e.auth = &auth.Authenticator{Secret: []byte(Secret), Now: func() time.Time { return Now }}
	tok, err := e.auth.Sign(Viewer, 24*time.Hour)
	if err != nil {
		e.Close()
		return nil, err
	}
	e.header = "Bearer " + tok
	if _, err := e.Store.EnsureTable(ctx); err != nil {
		e.Close()
		return nil, fmt.Errorf("table %s at %s: %w", table, endpoint, err)
	}
	return e, nil
}

// clientOptions are the DynamoDB client's base options for the endpoint.
func clientOptions(ctx context.Context, endpoint string) (dynamodb.Options, error) {
	o := dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	if r := cmp.Or(os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION")); r != "" {
		o.Region = r
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" || os.Getenv("AWS_PROFILE") != "" {
		cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(o.Region))
		if err != nil {
			return o, fmt.Errorf("loading the AWS configuration: %w", err)
		}
		o.Credentials = cfg.Credentials
	}
	return o, nil
}

// Seed loads the dataset at scale into the table and keeps its fixture.
func (e *Env) Seed(ctx context.Context, scale int) error {
	f, err := Seed(ctx, e.Store, scale)
	if err != nil {
		return err
	}
	e.Fixture = f
	return nil
}

// DropTable deletes the table (for endpoints that outlive the run).
func (e *Env) DropTable(ctx context.Context) error {
	_, err := e.Client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(e.Store.Table())})
	return err
}

// Close stops the gate.
func (e *Env) Close() {
	if e.Gate != nil {
		e.Gate.Close()
	}
}

// HandlerTimeout replaces pipeline.DefaultTimeout (10 s) in the benchmark: on
// the embedded store a dashboard at 4× under 32 clients queues for longer
// than that, and the benchmark measures the server, not its time limit.
const HandlerTimeout = 10 * time.Minute

// Handler returns the GraphQL handler (POST /query) in mode m.
func (e *Env) Handler(m Mode) http.Handler {
	return app.NewHandler(e.Store, e.auth, web.Options{Options: pipeline.Options{Limits: pipeline.Limits{Timeout: HandlerTimeout}, Hooks: pipeline.Hooks{Loaders: m.Loaders}}})
}

// Recorder is a minimal, reusable http.ResponseWriter for in-process
// requests: the load driver's share of the measured CPU stays small.
type Recorder struct {
	Status int
	Body   bytes.Buffer
	header http.Header
}

// Header implements http.ResponseWriter.
func (r *Recorder) Header() http.Header { return r.header }

// WriteHeader implements http.ResponseWriter.
func (r *Recorder) WriteHeader(status int) {
	if r.Status == 0 {
		r.Status = status
	}
}

// Write implements http.ResponseWriter.
func (r *Recorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.Body.Write(b)
}

func (r *Recorder) reset() {
	r.Status = 0
	r.Body.Reset()
	if r.header == nil {
		r.header = http.Header{}
	}
	clear(r.header)
}

var errorsKey = []byte(`"errors"`)

// Do posts one GraphQL request body to h as the viewer, through the
// handler's ServeHTTP, and fails on a non-200 status or any GraphQL error.
// The answer is in w.Body.
func (e *Env) Do(ctx context.Context, h http.Handler, body []byte, w *Recorder) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/query", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", e.header)
	w.reset()
	h.ServeHTTP(w, req)
	if w.Status != http.StatusOK || bytes.Contains(w.Body.Bytes(), errorsKey) {
		return fmt.Errorf("status %d: %.500s", w.Status, w.Body.String())
	}
	return nil
}

// Check runs op once (gate off) and returns the answer and the number of
// objects in its data (a measure of what the operation returns); it fails
// when the answer has errors or no data.
func (e *Env) Check(ctx context.Context, h http.Handler, op Op) (answer []byte, objects int, err error) {
	var w Recorder
	if err := e.Do(ctx, h, op.Body(e.Fixture), &w); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", op.Name, err)
	}
	var res struct{ Data any }
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", op.Name, err)
	}
	n := countObjects(res.Data) - 1 // not data itself
	if n < 1 {
		return nil, 0, fmt.Errorf("%s: empty answer %s", op.Name, w.Body.String())
	}
	return bytes.Clone(w.Body.Bytes()), n, nil
}

func countObjects(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		n++
		for _, c := range x {
			n += countObjects(c)
		}
	case []any:
		for _, c := range x {
			n += countObjects(c)
		}
	}
	return n
}

// Count is what one operation, run alone, asked of DynamoDB.
type Count struct {
	Calls      Calls
	RoundTrips int
	// Rounds is the number of calls in each round trip, in order.
	Rounds []int
}

// Count runs op alone with the gate on and returns its DynamoDB calls by
// operation and its sequential round trips (the gate's releases). Nothing
// else may use the Env meanwhile.
func (e *Env) Count(ctx context.Context, h http.Handler, op Op) (Count, error) {
	body := op.Body(e.Fixture)
	var w Recorder
	e.Gate.SetOn(true)
	defer e.Gate.SetOn(false)
	calls0, rel0 := e.Calls.Snapshot(), e.Gate.Releases()
	if err := e.Do(ctx, h, body, &w); err != nil {
		return Count{}, fmt.Errorf("%s: %w", op.Name, err)
	}
	return Count{Calls: e.Calls.Snapshot().Sub(calls0), RoundTrips: int(e.Gate.Releases() - rel0), Rounds: e.Gate.Sizes(rel0)}, nil
}
