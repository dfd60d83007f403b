package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// slowBuffer is instance B's subscription buffer (-subscription-buffer):
// small, so that the slow consumer check needs few events.
const slowBuffer = 8

// liveConfig is what clients/live/run.mjs reads from LIVE_CONFIG.
type liveConfig struct {
	A             string            `json:"a"`             // the /query URL of instance A
	B             string            `json:"b"`             // of instance B
	Tokens        map[string]string `json:"tokens"`        // viewer → token; "expired" is alice's, expired
	Users         map[string]string `json:"users"`         // viewer → user id
	Project       string            `json:"project"`       // "Website relaunch": alice (owner), bob, carol
	AppProject    string            `json:"appProject"`    // "Mobile app": alice is a member
	OtherProject  string            `json:"otherProject"`  // "Research": alice is not a member
	Task          string            `json:"task"`          // a task of Project
	AllowedOrigin string            `json:"allowedOrigin"` // in B's CORS origins
	DeniedOrigin  string            `json:"deniedOrigin"`  // not in them
	WaitMS        int               `json:"waitMs"`        // the script's failure guard per wait
	BufferB       int               `json:"bufferB"`       // B's subscription buffer
	// SubscribersB answers GET ?project=<id> with how many subscriptions of
	// the project B's hub holds: how the script sees B cut a subscriber off.
	SubscribersB string `json:"subscribersB"`
}

// TestLiveClients proves live updates with the clients our users use: the
// graphql-ws and graphql-sse npm clients, a legacy graphql-ws client and
// raw sockets (clients/live/run.mjs), against two server instances A and B
// that share one table (dynalite) and one external NATS server with
// JetStream, as several instances run in production. Each check of the
// script is a subtest; what each proves is in its name.
//
// The table is the embedded store's (minidyn over its HTTP endpoint, each
// instance with a client of its own), not dynalite's: dynalite has no
// TransactWriteItems, which every mutation uses. It needs the Node tools
// (node_modules, installed by scripts/test); without them it is skipped,
// unless CI is set.
func TestLiveClients(t *testing.T) {
	nodeModules := mustNodeTools(t)
	env := testenv.New(t)
	seed := env.MustSeed(t)
	natsURL := mustStartNATS(t)

	a := startLiveInstance(t, env, natsURL, "", live.HubConfig{})
	b := startLiveInstance(t, env, natsURL, "https://app.example.com", live.HubConfig{Buffer: slowBuffer})

	expired := &auth.Authenticator{Secret: []byte(testenv.Secret), Now: func() time.Time { return testenv.Now.Add(-2 * time.Hour) }}
	expiredToken, err := expired.Sign("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// Valid when its socket starts, expired 2 seconds later (the servers'
	// clock stands still; the expiry timer runs on the real one).
	shortLived, err := env.Auth.Sign("alice", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cfg := liveConfig{
		A: a.URL + "/query", B: b.URL + "/query",
		Tokens: map[string]string{"alice": env.Token(t, "alice"), "bob": env.Token(t, "bob"), "carol": env.Token(t, "carol"),
			"dave": env.Token(t, "dave"), "eve": env.Token(t, "eve"), "expired": expiredToken, "shortLived": shortLived},
		Users:      map[string]string{"alice": "alice", "bob": "bob", "carol": "carol", "dave": "dave", "eve": "eve"},
		Project:    seed.Project("Website relaunch").ID,
		AppProject: seed.Project("Mobile app").ID, OtherProject: seed.Project("Research").ID,
		Task:          seed.Task("Set up analytics").ID,
		AllowedOrigin: "https://app.example.com", DeniedOrigin: "https://evil.example.com",
		WaitMS: 20_000, BufferB: slowBuffer,
	}
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, b.Hub.Subscribers(r.URL.Query().Get("project")))
	}))
	t.Cleanup(probe.Close)
	cfg.SubscribersB = probe.URL
	runLiveScript(t, nodeModules, cfg)

	t.Run("a slow consumer's socket is closed with 1013 and the documented reason, others unharmed, and it resumes with its cursor", func(t *testing.T) {
		testSlowConsumer(t, env, a, b, seed.Project("Mobile app").ID, seed.Task("Dark mode").ID)
	})
}

// The documents of the production instance's manifest in
// TestLiveClientsInProduction (clients/live/trusted.mjs sends them by id).
var trustedLiveDocs = map[string]string{
	"me":         "query Me { me { id name } }",
	"events":     "subscription Events($projectId: ID!) { projectEvents(projectId: $projectId) { kind cursor task { id title version } } }",
	"updateTask": "mutation UpdateTask($input: UpdateTaskInput!) { updateTask(input: $input) { id title version } }",
}

// TestLiveClientsInProduction runs the graphql-ws npm client against an
// instance started as -production -trusted-documents starts it
// (clients/live/trusted.mjs): over the WebSocket an untrusted mutation is
// refused with TRUSTED_DOCUMENT_REQUIRED and changes nothing, while trusted
// documents, named by documentId or by their persisted-query hash, run:
// a query, a mutation and a subscription.
func TestLiveClientsInProduction(t *testing.T) {
	nodeModules := mustNodeTools(t)
	env := testenv.New(t)
	seed := env.MustSeed(t)
	natsURL := mustStartNATS(t)
	manifest := map[string]string{}
	ids := map[string]string{}
	for name, doc := range trustedLiveDocs {
		sum := sha256.Sum256([]byte(doc))
		ids[name] = "sha256:" + hex.EncodeToString(sum[:])
		manifest[ids[name]] = doc
	}
	data, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	trusted, err := pipeline.ParseTrustedDocuments(data)
	if err != nil {
		t.Fatal(err)
	}
	p := startLiveInstanceWith(t, env, natsURL, func(a *app.App) { a.TrustedDocuments, a.Config.Production = trusted, true })
	cfg := map[string]any{
		"url": p.URL + "/query", "token": env.Token(t, "alice"), "project": seed.Project("Website relaunch").ID,
		"task": seed.Task("Set up analytics").ID, "ids": ids, "docs": trustedLiveDocs, "waitMs": 20_000,
	}
	runNodeChecks(t, nodeModules, filepath.Join("clients", "live", "trusted.mjs"), cfg)
	var me struct{ Me struct{ Name string } }
	env.MustQuery(t, "alice", "{ me { name } }", nil, &me)
	if me.Me.Name != "Alice Example" {
		t.Errorf("alice's name is %q after the refused mutation", me.Me.Name)
	}
}

// runLiveScript runs clients/live/run.mjs with cfg and makes each of its
// checks a subtest; a planned check with no result fails.
func runLiveScript(t *testing.T, nodeModules string, cfg liveConfig) {
	t.Helper()
	runNodeChecks(t, nodeModules, filepath.Join("clients", "live", "run.mjs"), cfg)
}

// runNodeChecks runs a script of checks (one JSON line each after a plan,
// as clients/live/run.mjs prints them) with cfg in LIVE_CONFIG, and makes
// each of its checks a subtest; a planned check with no result fails.
func runNodeChecks(t *testing.T, nodeModules, script string, cfg any) {
	t.Helper()
	runNodeChecksWith(t, nodeModules, cfg, nil, script)
}

// runNodeChecksWith is runNodeChecks with more environment variables (env,
// "NAME=value") and node's arguments (its options, then the script).
func runNodeChecksWith(t *testing.T, nodeModules string, cfg any, env []string, args ...string) {
	t.Helper()
	conf, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard: the script takes seconds
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(append(os.Environ(), "LIVE_CONFIG="+string(conf), "NODE_PATH="+nodeModules), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	var plan []string
	results := map[string]struct {
		OK     bool
		Detail string
	}{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Plan   []string
			Check  string
			OK     bool
			Detail string
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Errorf("the script printed %q: %v", sc.Text(), err)
			continue
		}
		if line.Plan != nil {
			plan = line.Plan
			continue
		}
		results[line.Check] = struct {
			OK     bool
			Detail string
		}{line.OK, line.Detail}
	}
	if len(plan) == 0 {
		t.Fatalf("the script planned no check (%v)\nstderr:\n%s", runErr, stderr.String())
	}
	for _, name := range plan {
		t.Run(name, func(t *testing.T) {
			r, ok := results[name]
			switch {
			case !ok:
				t.Errorf("no result (the script ended: %v)", runErr)
			case !r.OK:
				t.Error(r.Detail)
			default:
				t.Log(r.Detail)
			}
		})
	}
	if t.Failed() {
		t.Logf("script stderr:\n%s", stderr.String())
	} else if runErr != nil {
		t.Errorf("every check passed but the script ended with %v\nstderr:\n%s", runErr, stderr.String())
	}
}

// mustNodeTools returns the node_modules directory with the live clients,
// checking that node runs. Without them the test is skipped, or fails when
// CI is set.
func mustNodeTools(t *testing.T) string {
	t.Helper()
	skip := func(why string) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: CI must have it (scripts/test installs the Node tools)", why)
		}
		t.Skipf("%s; scripts/test installs the Node tools", why)
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("no node")
	}
	dir, err := filepath.Abs("node_modules")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"graphql-ws", "graphql-sse", "ws", "graphql-http"} {
		if _, err := os.Stat(filepath.Join(dir, pkg, "package.json")); err != nil {
			skip("node_modules has no " + pkg)
		}
	}
	return dir
}

// mustStartNATS starts a NATS server with JetStream on a free loopback port,
// its store in a temporary directory, stopped when the test ends, and
// returns its URL: the external broker several instances share.
func mustStartNATS(t *testing.T) string {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	return s.ClientURL()
}

// liveInstance is one server instance of the test: its own store (on the
// shared table), broker connection and hub, the real handler on an
// httptest server.
type liveInstance struct {
	URL string
	Hub *live.Hub
}

// startLiveInstance starts an instance on env's table, its broker at
// natsURL, with the CORS origins cors (a CORS_ORIGINS value) and the hub's
// configuration hc; it stops when the test ends.
func startLiveInstance(t *testing.T, env *testenv.Env, natsURL, cors string, hc live.HubConfig) liveInstance {
	t.Helper()
	return startLiveInstanceWith(t, env, natsURL, func(a *app.App) { a.Config.CORSOrigins, a.Config.Hub = cors, hc })
}

// startLiveInstanceWith starts an App on env's table (a store of its own,
// with a client of its own to the shared store's endpoint) and
// authenticator, its broker at natsURL (also its store's event sink, as in
// the server), listening on a free loopback port, changed by set (when not
// nil) before it opens; it stops when the test ends.
func startLiveInstanceWith(t *testing.T, env *testenv.Env, natsURL string, set func(*app.App)) liveInstance {
	t.Helper()
	logs := &testenv.LogBuffer{}
	store := app.NewStore(env.Emb.Client(client.Options()...), env.Store.Table(), slog.New(slog.NewTextHandler(logs, nil)), func() time.Time { return testenv.Now })
	store.CleanupSettle = 0
	a := &app.App{Store: store, Auth: env.Auth, Config: app.Config{Live: live.Config{URL: natsURL, Name: t.Name()}}}
	if set != nil {
		set(a)
	}
	if err := a.Open(context.Background()); err != nil {
		t.Fatalf("starting an instance: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("instance %s's log:\n%s", a.URL, logs.String())
		}
		if err := a.Close(); err != nil {
			t.Errorf("closing %s: %v", a.URL, err)
		}
	})
	return liveInstance{URL: a.URL, Hub: a.Hub}
}

// testSlowConsumer subscribes twice to project on B as alice: one socket
// reads every event, the other (its subscription selecting a large
// payload) reads nothing. Changes to task made through A then fill the
// slow socket's TCP buffers and its subscription buffer (slowBuffer) until
// B's hub cuts it off. The reading subscriber must get every change in
// order; the slow one, once it reads, what was in flight, then the close
// 1013 Try Again Later with the documented reason; resubscribing with its
// last cursor (on A) brings the rest.
func testSlowConsumer(t *testing.T, env *testenv.Env, a, b liveInstance, project, task string) {
	alice := "Bearer " + env.Token(t, "alice")
	post := func(input map[string]any) int {
		t.Helper()
		var d struct{ UpdateTask struct{ Version int } }
		mustPost(t, a.URL, alice, `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { version } }`, map[string]any{"in": input}, &d)
		return d.UpdateTask.Version
	}
	// Without after, a stream starts about when it is subscribed: the
	// event of this change, made just before, may or may not come first;
	// both subscribers skip it.
	before := post(map[string]any{"id": task, "description": strings.Repeat("x", domain.MaxTextLen)})

	var big strings.Builder // 25 copies of the 10,000-character description
	for i := range 25 {
		fmt.Fprintf(&big, " d%d: task { description }", i)
	}
	const small = `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) { cursor task { title version } } }`
	bigQuery := `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) { cursor task { title version }` + big.String() + ` } }`

	reader := dialLive(t, b.URL, alice)
	reader.Subscribe(t, "1", small, map[string]any{"p": project})
	slow := dialLive(t, b.URL, alice)
	slow.Subscribe(t, "1", bigQuery, map[string]any{"p": project})
	testenv.WaitSubscribers(t, b.Hub, project, 2)

	// The reader keeps reading, in its own goroutine.
	type got struct {
		cursor, title string
		version       int
	}
	seen := make(chan got, 1000)
	var readerEnd error // why the reader's stream ended, once seen is closed
	go func() {
		defer close(seen)
		for {
			m, err := reader.Read(context.Background())
			if err != nil || m.Type != "next" {
				readerEnd = fmt.Errorf("%v %s %s", err, m.Type, m.Payload)
				return
			}
			var n struct {
				Data struct {
					ProjectEvents struct {
						Cursor string
						Task   struct {
							Title   string
							Version int
						}
					}
				}
			}
			if json.Unmarshal(m.Payload, &n) != nil {
				return
			}
			if e := n.Data.ProjectEvents; e.Task.Version > before {
				seen <- got{e.Cursor, e.Task.Title, e.Task.Version}
			}
		}
	}()

	// Change the task until B has cut the slow subscriber off.
	var versions []int
	for i := 1; b.Hub.Subscribers(project) == 2; i++ {
		if i > 500 {
			t.Fatalf("500 changes of %d KB each and the slow subscriber is still on", domain.MaxTextLen*25/1000)
		}
		versions = append(versions, post(map[string]any{"id": task, "title": fmt.Sprintf("Slow %d", i)}))
	}
	cutAfter := len(versions)
	// The slow socket reads again, at once: what was in flight, then the
	// close. (B writes the close frame behind what the socket holds; a
	// client that read nothing for 5 s more would see the connection drop
	// instead.)
	type slowEnd struct {
		cursors []string
		err     error
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	slowDone := make(chan slowEnd, 1)
	go func() {
		var r slowEnd
		for {
			m, err := slow.Read(ctx)
			if err != nil {
				r.err = err
				break
			}
			var e struct {
				Data struct {
					ProjectEvents struct {
						Cursor string
						Task   struct{ Version int }
					}
				}
				Errors []testenv.Error
			}
			if m.Type != "next" || json.Unmarshal(m.Payload, &e) != nil || len(e.Errors) > 0 {
				r.err = fmt.Errorf("a %s message before the close: %s", m.Type, m.Payload[:min(len(m.Payload), 300)])
				break
			}
			if e.Data.ProjectEvents.Task.Version != before {
				r.cursors = append(r.cursors, e.Data.ProjectEvents.Cursor)
			}
		}
		slowDone <- r
	}()
	// A few more: the reader must have those too.
	for i := range 3 {
		versions = append(versions, post(map[string]any{"id": task, "title": fmt.Sprintf("After the cut %d", i)}))
	}
	var all []got
	for len(all) < len(versions) {
		select {
		case g, ok := <-seen:
			if !ok {
				t.Fatalf("the reading subscriber's stream ended after %d of %d events: %v", len(all), len(versions), readerEnd)
			}
			all = append(all, g)
		case <-time.After(30 * time.Second):
			t.Fatalf("the reading subscriber got %d of %d events", len(all), len(versions))
		}
	}
	for i, g := range all {
		if g.version != versions[i] {
			t.Fatalf("the reading subscriber's event %d has version %d, the change answered %d", i, g.version, versions[i])
		}
	}
	t.Logf("cut off after %d changes; the reader got all %d", cutAfter, len(all))

	// The slow socket: a prefix of the events, then the close 1013 Try
	// Again Later (which the graphql-ws client retries) with its reason.
	r := <-slowDone
	var ce websocket.CloseError
	if !errors.As(r.err, &ce) || ce.Code != graph.CloseTryAgainLater || !strings.Contains(ce.Reason, "fell behind") || !strings.Contains(ce.Reason, "cursor") {
		t.Fatalf("the slow socket ended with %v after %d events, want the close 1013 (fell behind; resume with your last cursor)", r.err, len(r.cursors))
	}
	t.Logf("the slow subscriber got %d events, then the close %d %q", len(r.cursors), ce.Code, ce.Reason)
	n := len(r.cursors)
	if n >= cutAfter {
		t.Fatalf("the slow subscriber got %d events, as many as were made before it was cut off", n)
	}
	for i, c := range r.cursors {
		if c != all[i].cursor {
			t.Fatalf("the slow subscriber's event %d is not the reader's", i)
		}
	}
	if n == 0 {
		t.Skip("the slow subscriber got no event before it was cut off; nothing to resume from") // never seen: the TCP buffers hold several
	}
	// Resume, on A (any instance: a cursor is the stream's): exactly the
	// events it missed.
	back := dialLive(t, a.URL, alice)
	back.Subscribe(t, "1", small, map[string]any{"p": project, "after": r.cursors[n-1]})
	for i := n; i < len(all); i++ {
		m, err := back.Read(ctx)
		if err != nil || m.Type != "next" || !strings.Contains(string(m.Payload), all[i].cursor) {
			t.Fatalf("resumed event %d: %v %s %s, want the cursor %s", i, err, m.Type, m.Payload, all[i].cursor)
		}
	}
}

// dialLive opens a graphql-transport-ws connection to base's /query,
// authenticated with authorization, and waits for its acknowledgement; it
// is read only when the test says so.
func dialLive(t *testing.T, base, authorization string) *testenv.WSClient {
	t.Helper()
	c, err := testenv.DialWSURL(t, base, testenv.WSAuth(authorization), testenv.WSReadLimit(4<<20))
	if err != nil {
		t.Fatalf("connecting to %s: %v", base, err)
	}
	return c
}

// mustPost sends a GraphQL operation over HTTP to base's /query and decodes
// its data into out; any error fails the test.
func mustPost(t *testing.T, base, authorization, query string, vars map[string]any, out any) {
	t.Helper()
	testenv.MustPostURL(t, base+"/query", authorization, query, vars, out)
}
