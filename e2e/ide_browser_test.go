package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/ide"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestIDEInABrowser opens the IDE of a server started as a newcomer starts
// it (the real binary, no configuration: embedded store, demo data, the
// printed token) in headless Chromium with no network but the server, and
// uses it as a person would: the schema loads, the token is in the headers
// pane, a typed query runs. The page must make no request elsewhere, break
// no rule of its Content-Security-Policy and log no error.
//
// It runs with every other test (scripts/test); the tests that pin
// DynamoDB calls step their batches, so the CPU Chromium takes does not
// change their counts. It needs Chromium (.ci/run installs it); without it
// the test is skipped, unless CI is set.
// IDE_SCREENSHOT=/path.png saves what the browser showed.
func TestIDEInABrowser(t *testing.T) {
	chrome := mustFindChromium(t)
	srv := mustStartServer(t)

	// Everything but the server goes to a dead proxy (Chromium reaches
	// loopback addresses directly), so an asset fetched from elsewhere
	// would fail; the request log below proves none was even tried.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 800),
		chromedp.ProxyServer("http://127.0.0.1:9"))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // starts the browser and the tab, for as long as ctx lives
		t.Fatalf("starting Chromium: %v", err)
	}

	rec := &pageRecord{}
	if err := chromedp.Listen(ctx, rec.listen); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__cspViolations = [];
			document.addEventListener('securitypolicyviolation',
				e => window.__cspViolations.push(e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline')));`,
	}); err != nil {
		t.Fatal(err)
	}

	// A step that waits longer than this fails (a hung page, never a slow
	// one): the browser lives on, so the failure can say what the page shows.
	const stepTimeout = time.Minute
	shows := func() string {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		text, _ := chromedp.Run(c, chromedp.Evaluate[string](`document.body.innerText.slice(0, 2000)`))
		return text
	}
	// must runs steps in the tab, eval evaluates a JavaScript expression
	// there (as DevTools does: the page's CSP does not apply to it).
	must := func(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, stepTimeout)
		defer cancel()
		if err := chromedp.Do(c, steps...); err != nil {
			t.Fatalf("%s: %v\n%s\nthe page shows:\n%s", what, err, rec.summary(), shows())
		}
	}
	eval := func(t *testing.T, what, js string) string {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, stepTimeout)
		defer cancel()
		v, err := chromedp.Run(c, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, rec.summary())
		}
		return v
	}

	// warnedBeforeDialog: the console's warnings before GraphiQL's settings
	// dialog opened, whose Radix UI dialog warns of a missing Description
	// (GraphiQL's markup, not the page's); -1 until then.
	warnedBeforeDialog := -1
	// The steps build on each other: the first failure ends the walk.
	walk := []struct {
		name string
		step func(t *testing.T)
	}{{"the IDE renders", func(t *testing.T) {
		must(t, "loading the IDE", chromedp.Navigate(srv.url),
			chromedp.WaitVisible(chromedp.CSS(".graphiql-container .graphiql-query-editor .CodeMirror")))
	}}, {"the docs explorer lists Query: the schema loaded", func(t *testing.T) {
		must(t, "opening the docs", chromedp.Click(chromedp.CSS(`.graphiql-sidebar button[aria-label="Show Documentation Explorer"]`)),
			chromedp.WaitVisible(chromedp.CSS(".graphiql-doc-explorer-root-type + .graphiql-doc-explorer-type-name")))
		if got := eval(t, "reading the root types", `[...document.querySelectorAll('.graphiql-doc-explorer-root-type')].map(e => e.parentElement.textContent).join(', ')`); !strings.Contains(got, "query: Query") {
			t.Fatalf("docs explorer root types = %q, want query: Query", got)
		}
	}}, {"the headers pane holds the printed token", func(t *testing.T) {
		must(t, "showing the headers", chromedp.WaitVisible(chromedp.CSS(".graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror")))
		got := eval(t, "reading the headers", `document.querySelector('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror').CodeMirror.getValue()`)
		if want := `"Authorization": "Bearer ` + srv.token + `"`; !strings.Contains(got, want) {
			t.Fatalf("headers pane = %q, want it to hold %s", got, want)
		}
	}}, {"the editor opens on the example, which runs and shows data", func(t *testing.T) {
		if got := eval(t, "reading the editor", `document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()`); got != ide.Example {
			t.Fatalf("on a first visit the editor holds %q, want ide.Example", got)
		}
		// The result pane is a CodeMirror too: its value is the whole answer.
		const answer = `document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue() ?? ''`
		must(t, "running the example until an answer shows", chromedp.Click(chromedp.CSS(".graphiql-execute-button")),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := chromedp.Poll[bool](`(`+answer+`).includes('"tasksByTag"')`, chromedp.WithPollingTimeout(0))(ctx, tg)
				return err
			}))
		var got struct {
			Data struct {
				Me struct {
					Email    string
					Projects struct{ Edges []any }
				}
				TasksByTag struct{ Edges []any }
			}
			Errors     []any
			Extensions struct{ Cost *pipeline.Cost }
		}
		if err := json.Unmarshal([]byte(eval(t, "reading the answer", answer)), &got); err != nil {
			t.Fatalf("the result pane holds no JSON: %v", err)
		}
		if len(got.Errors) > 0 || got.Data.Me.Email == "" || len(got.Data.Me.Projects.Edges) == 0 || len(got.Data.TasksByTag.Edges) == 0 {
			t.Fatalf("the example answered %+v; want data and no errors", got)
		}
		// What it cost shows with the answer (extensions.cost).
		if c := got.Extensions.Cost; c == nil || c.ActualQueryCost <= 0 || c.RequestedQueryCost < c.ActualQueryCost || c.ReadUnits <= 0 {
			t.Fatalf("the result pane shows extensions.cost %+v; want it, its estimate at least its actual cost, and the read units", c)
		}
		// The pane renders the lines in view: scrolled to its end, it shows
		// the cost below the data.
		eval(t, "scrolling the response to its end", `(cm => (cm.scrollIntoView({line: cm.lastLine(), ch: 0}), ''))(document.querySelector('.graphiql-response .CodeMirror').CodeMirror)`)
		must(t, "waiting for the cost to show in the response pane", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`['"requestedQueryCost"', '"actualQueryCost"', '"readUnits"'].every(s => document.querySelector('.graphiql-response .CodeMirror-code')?.textContent.includes(s))`,
				chromedp.WithPollingTimeout(0))(ctx, tg)
			return err
		}))
	}}, {"a query typed into the editor runs and shows data", func(t *testing.T) {
		const query = "{ me { name } }"
		// Empty the editor (it starts with the example), then type.
		eval(t, "emptying the editor", `(cm => (cm.setValue(''), cm.focus(), ''))(document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror)`)
		must(t, "typing the query", chromedp.KeyEvent(query))
		if got := eval(t, "reading the editor", `document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()`); got != query {
			t.Fatalf("the editor holds %q after typing, want %q", got, query)
		}
		must(t, "running the query until the response shows Alice Example", chromedp.Click(chromedp.CSS(".graphiql-execute-button")),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := chromedp.Poll[bool](`document.querySelector('.graphiql-response')?.textContent.includes('"Alice Example"')`,
					chromedp.WithPollingTimeout(0))(ctx, tg)
				return err
			}))
	}}, {"a subscription runs over a WebSocket and shows a change made over HTTP", func(t *testing.T) {
		project := srv.mustProject(t, "Website relaunch")
		query := `subscription { projectEvents(projectId: "` + project + `") { kind task { title assignee { name } } } }`
		eval(t, "setting the subscription", `(cm => (cm.setValue(`+strconv.Quote(query)+`), ''))(document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror)`)
		// GraphiQL parses the editor's text a moment after a change; it
		// sends a subscription to its WebSocket fetcher only once it knows
		// the operation is one.
		must(t, "waiting for GraphiQL to parse the subscription", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.documentAST?.definitions?.[0]?.operation === 'subscription'`,
				chromedp.WithPollingTimeout(0))(ctx, tg)
			return err
		}))
		must(t, "starting the subscription", chromedp.Click(chromedp.CSS(".graphiql-execute-button")))
		shown := func(title string, within time.Duration) bool {
			c, cancel := context.WithTimeout(ctx, within)
			defer cancel()
			_, err := chromedp.Run(c, chromedp.Poll[bool](`document.querySelector('.graphiql-response')?.textContent.includes(`+strconv.Quote(title)+`)`))
			return err == nil
		}
		// The subscription starts live: until its first event, a change may
		// come before it is in place. Change the task until one shows; from
		// then on every change reaches the page.
		task := srv.mustTask(t, project, "Set up analytics")
		warm := false
		for i := 1; i <= 20 && !warm; i++ {
			srv.mustUpdateTitle(t, task, fmt.Sprintf("Warm-up %d", i))
			warm = shown(fmt.Sprintf("Warm-up %d", i), time.Duration(i)*250*time.Millisecond)
		}
		if !warm {
			t.Fatalf("no event reached the result pane after 20 changes\n%s\nthe page shows:\n%s", rec.summary(), shows())
		}
		srv.mustUpdateTitle(t, task, "Changed over HTTP")
		if !shown("Changed over HTTP", stepTimeout) {
			t.Fatalf("the change made over HTTP did not show in the result pane\n%s\nthe page shows:\n%s", rec.summary(), shows())
		}
		if got := eval(t, "reading the response", `document.querySelector('.graphiql-response').textContent`); !strings.Contains(got, "TASK_UPDATED") || !strings.Contains(got, "Alice Example") {
			t.Errorf("the result pane shows %q, want a TASK_UPDATED event with the assignee's name", got)
		}
		rec.mu.Lock()
		sockets := slices.Clone(rec.sockets)
		rec.mu.Unlock()
		if len(sockets) == 0 {
			t.Errorf("the page opened no WebSocket; requests: %s", rec.summary())
		}
		// Stop it, so that the page settles (the execute button stops a
		// running subscription).
		must(t, "stopping the subscription", chromedp.Click(chromedp.CSS(".graphiql-execute-button")))
	}}, {"a dialog opens under the CSP", func(t *testing.T) {
		rec.mu.Lock()
		warnedBeforeDialog = len(rec.warnings)
		rec.mu.Unlock()
		// GraphiQL's dialogs add a <style> element: the page's style nonce
		// must admit it (the violation check below would see it refused).
		must(t, "opening the settings", chromedp.Click(chromedp.CSS(`.graphiql-sidebar button[aria-label="Open settings dialog"]`)),
			chromedp.WaitVisible(chromedp.CSS(".graphiql-dialog")))
		if got := eval(t, "counting style elements", `String(document.querySelectorAll('style[nonce]').length)`); got == "0" {
			t.Fatal("the open dialog added no <style nonce> element; the test no longer covers the style nonce")
		}
	}}}
	for _, w := range walk {
		if !t.Run(w.name, w.step) {
			break
		}
	}

	if path := os.Getenv("IDE_SCREENSHOT"); path != "" && !t.Failed() {
		must(t, "closing the dialog", chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(chromedp.CSS(".graphiql-dialog")))
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err == nil {
			err = os.WriteFile(path, png, 0o644)
		}
		if err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}

	t.Run("no CSP violation, console error or request elsewhere", func(t *testing.T) {
		if got := eval(t, "reading the CSP violations", `window.__cspViolations.join('; ')`); got != "" {
			t.Errorf("CSP violations: %s", got)
		}
		// Listen saw every event that came before the reply to the last
		// command, so the record is complete here.
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.errors) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(rec.errors, "\n"))
		}
		warnings := rec.warnings
		if warnedBeforeDialog >= 0 {
			warnings = warnings[:warnedBeforeDialog]
		}
		if len(warnings) > 0 {
			t.Errorf("console warnings:\n%s", strings.Join(warnings, "\n"))
		}
		server, _ := url.Parse(srv.url)
		sawAssets := false
		for _, u := range rec.requests {
			p, err := url.Parse(u)
			if err != nil || (p.Scheme != "data" && p.Host != server.Host) {
				t.Errorf("the page requested %s, not from the server %s", u, server.Host)
			}
			sawAssets = sawAssets || p.Path == "/ide/graphiql.min.js"
		}
		for _, u := range rec.sockets {
			p, err := url.Parse(u)
			if err != nil || p.Scheme != "ws" || p.Host != server.Host || p.Path != "/query" {
				t.Errorf("the page opened the WebSocket %s, want ws://%s/query", u, server.Host)
			}
		}
		if !sawAssets {
			t.Errorf("no request for /ide/graphiql.min.js was seen: the request log is not working; it has %q", rec.requests)
		}
	})
}

// pageRecord collects, from the tab's events in their order, the URLs the
// page requested and the errors it logged.
type pageRecord struct {
	mu       sync.Mutex
	requests []string
	sockets  []string // WebSocket URLs
	errors   []string
	warnings []string // console.warn
}

func (r *pageRecord) listen(ev any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		r.requests = append(r.requests, ev.Request.URL)
	case *network.EventWebSocketCreated:
		r.sockets = append(r.sockets, ev.URL)
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			r.errors = append(r.errors, "console.error: "+strings.Join(args, " "))
		}
		if ev.Type == runtime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			r.warnings = append(r.warnings, "console.warn: "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		r.errors = append(r.errors, "exception: "+text)
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			r.errors = append(r.errors, fmt.Sprintf("%s: %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	}
}

func (r *pageRecord) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var reqs []string
	for _, u := range r.requests {
		if len(u) > 100 {
			u = u[:100] + "…"
		}
		reqs = append(reqs, u)
	}
	return fmt.Sprintf("requests: %q\nWebSockets: %q\nerrors: %q", reqs, r.sockets, r.errors)
}

// mustFindChromium returns the path of a Chromium or Chrome binary. Without
// one the test is skipped, or fails when CI is set.
func mustFindChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium found (chromium, chromium-browser, google-chrome): CI must have one (.ci/run installs it)")
	}
	t.Skip("no Chromium found (chromium, chromium-browser, google-chrome); install one to run the browser test")
	return ""
}

type startedServer struct {
	url   string    // as the server prints it, e.g. http://127.0.0.1:8080/
	token string    // the printed demo token
	cmd   *exec.Cmd // the process
	logs  func() string
}

var (
	tokenLine   = regexp.MustCompile(`Authorization: Bearer (\S+)`)
	servingLine = regexp.MustCompile(`msg=serving addr=(http://127\.0\.0\.1:\d+/)`)
)

// mustStartServer builds the server and starts it as a newcomer does: no
// configuration but a free port. It stops when the test ends.
func mustStartServer(t *testing.T) startedServer {
	t.Helper()
	return mustRunServer(t, mustBuildServer(t), t.TempDir())
}

// mustBuildServer builds the server's binary as go run . does.
func mustBuildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "taskgraph")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// mustRunServer starts the binary bin in the working directory dir (its
// data directory, .taskgraph, lands there) with no configuration but a
// free port, and returns once it serves. It stops when the test ends, if
// it has not been stopped before.
func mustRunServer(t *testing.T, bin, dir string) startedServer {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "AWS_") && !strings.HasPrefix(name, "JWT_") &&
			name != "PORT" && name != "HOST" && name != "ALLOWED_HOSTS" && name != "TABLE_NAME" && name != "CORS_ORIGINS" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PORT=0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var logs strings.Builder
	tokens, urls := make(chan string, 1), make(chan string, 1)
	scan := func(r io.Reader, re *regexp.Regexp, found chan<- string) {
		s := bufio.NewScanner(r)
		for s.Scan() {
			logMu.Lock()
			logs.WriteString(s.Text() + "\n")
			logMu.Unlock()
			if m := re.FindStringSubmatch(s.Text()); m != nil && len(found) == 0 {
				found <- m[1]
			}
		}
	}
	done := make(chan struct{})
	go scan(stdout, tokenLine, tokens)
	go func() { scan(stderr, servingLine, urls); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
		if t.Failed() {
			logMu.Lock()
			t.Logf("server output:\n%s", logs.String())
			logMu.Unlock()
		}
	})
	s := startedServer{cmd: cmd, logs: func() string {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.String()
	}}
	timeout := time.After(time.Minute) // a server that never starts fails; one that is slow still passes
	for s.token == "" || s.url == "" {
		select {
		case s.token = <-tokens:
		case s.url = <-urls:
		case <-done:
			t.Fatal("the server stopped before it served")
		case <-timeout:
			t.Fatal("the server printed no token and address within a minute")
		}
	}
	return s
}

// mustGraphQL posts a GraphQL operation to the started server as the demo
// user and decodes its data into out; any error fails the test.
func (s startedServer) mustGraphQL(t *testing.T, query string, vars map[string]any, out any) {
	t.Helper()
	testenv.MustPostURL(t, s.url+"query", "Bearer "+s.token, query, vars, out)
}

// mustProject returns the id of the demo user's project of that name.
func (s startedServer) mustProject(t *testing.T, name string) string {
	t.Helper()
	var d struct {
		Me struct {
			Projects struct{ Nodes []struct{ ID, Name string } }
		}
	}
	s.mustGraphQL(t, `{ me { projects(first: 20) { nodes { id name } } } }`, nil, &d)
	for _, p := range d.Me.Projects.Nodes {
		if p.Name == name {
			return p.ID
		}
	}
	t.Fatalf("the demo user has no project %q: %+v", name, d.Me.Projects.Nodes)
	return ""
}

// mustTask returns the id of the project's task of that title.
func (s startedServer) mustTask(t *testing.T, project, title string) string {
	t.Helper()
	var d struct {
		Project struct {
			Tasks struct{ Nodes []struct{ ID, Title string } }
		}
	}
	s.mustGraphQL(t, `query($id: ID!) { project(id: $id) { tasks(first: 50) { nodes { id title } } } }`, map[string]any{"id": project}, &d)
	for _, n := range d.Project.Tasks.Nodes {
		if n.Title == title {
			return n.ID
		}
	}
	t.Fatalf("project %s has no task %q", project, title)
	return ""
}

// mustUpdateTitle renames a task over HTTP.
func (s startedServer) mustUpdateTitle(t *testing.T, task, title string) {
	t.Helper()
	var d struct{ UpdateTask struct{ Title string } }
	s.mustGraphQL(t, `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { title } }`,
		map[string]any{"in": map[string]any{"id": task, "title": title}}, &d)
	if d.UpdateTask.Title != title {
		t.Fatalf("updateTask answered title %q, want %q", d.UpdateTask.Title, title)
	}
}
