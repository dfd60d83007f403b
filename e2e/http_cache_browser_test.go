package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// TestAnUnchangedScreenReloadsAsNotModified runs Apollo Client (HttpLink
// with useGETForQueries) and urql (preferGetMethod) as users run them, in
// headless Chromium, on a page of another origin than the server's (CORS):
// each asks a screen with GET, then the page is reloaded and asks it again.
// The browser's HTTP cache sends the answer's ETag as If-None-Match, the
// server answers 304 Not Modified without running the query, and the
// client gets the very data of the first answer; after a change of what
// the screen shows, the next reload gets the new data. Both libraries load as the
// packages ship them (ES modules of node_modules through an import map),
// in development mode (__DEV__), a console warning or error failing the
// test. It needs Chromium and the Node tools; without them it is skipped,
// unless CI is set.
func TestAnUnchangedScreenReloadsAsNotModified(t *testing.T) {
	chrome := mustFindChromium(t)
	nodeModules := mustNodeTools(t)
	for _, pkg := range []string{"@apollo/client", "@urql/core", "graphql", "rxjs", "wonka"} {
		if _, err := os.Stat(filepath.Join(nodeModules, pkg, "package.json")); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("node_modules has no %s: CI must have it", pkg)
			}
			t.Skipf("node_modules has no %s; scripts/test installs the Node tools", pkg)
		}
	}
	env := testenv.New(t)
	env.MustSeed(t) // the demo data: no change of its projects to settle
	var mu sync.Mutex
	var seen []string // each GET of /query: its status, its If-None-Match, its ETag
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusOf{ResponseWriter: w}
		env.Handler.ServeHTTP(rec, r)
		if r.Method == http.MethodGet {
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%d if-none-match=%t etag=%t", rec.status, r.Header.Get("If-None-Match") != "",
				w.Header().Get("ETag") != ""))
			mu.Unlock()
		}
	}))
	defer api.Close()
	page := httptest.NewServer(modulePage(nodeModules))
	defer page.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox,
		chromedp.ProxyServer("http://127.0.0.1:9")) // nothing but loopback
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	var failed []string // the page's requests that failed, for a failure's message
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				failed = append(failed, fmt.Sprintf("%d %s", e.Response.Status, e.Response.URL))
			}
		case *network.EventLoadingFailed:
			failed = append(failed, e.ErrorText+" "+string(e.RequestID))
		case *runtime.EventExceptionThrown:
			failed = append(failed, e.ExceptionDetails.Text)
		}
	}); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, what string, action chromedp.Action[chromedp.Void]) string {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(c, action, chromedp.WaitReady(chromedp.CSS(`body.done`))); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		result, err := chromedp.Run(c, chromedp.Evaluate[string](`window.__result`))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		logs, err := chromedp.Run(c, chromedp.Evaluate[string](`window.__logs.join("\n")`))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if logs != "" {
			t.Errorf("%s: the console says\n%s", what, logs)
		}
		if strings.HasPrefix(result, "error") || !strings.Contains(result, "Alice") {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%s: the screen shows %s; failed requests: %q", what, result, failed)
		}
		return result
	}
	for _, lib := range []string{"apollo", "urql"} {
		t.Run(lib, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			frag := url.Values{"lib": {lib}, "api": {api.URL + "/query"}, "token": {env.Token(t, "alice")}}.Encode()
			first := run(t, "loading the screen", chromedp.Navigate(page.URL+"/?"+frag))
			again := run(t, "reloading it", chromedp.Reload())
			if again != first {
				t.Errorf("the reload shows\n%s\nthe first load\n%s", again, first)
			}
			// A change of what the screen shows: the next reload is no 304.
			name := "Alice " + lib
			env.MustQuery(t, "alice", `mutation($n: String!) { updateProfile(input: {name: $n}) { id } }`, map[string]any{"n": name}, nil)
			if changed := run(t, "reloading it after a change", chromedp.Reload()); !strings.Contains(changed, `"`+name+`"`) {
				t.Errorf("after alice's rename the screen shows %s", changed)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 3 || !strings.HasSuffix(seen[0], "etag=true") || seen[1] != "304 if-none-match=true etag=true" ||
				!strings.HasPrefix(seen[2], "200 if-none-match=true") {
				t.Errorf("the GETs of /query: %q; want an answer with an ETag, a 304 to the browser's If-None-Match, "+
					"then after the change a 200 to it", seen)
			}
		})
	}
}

// statusOf records the status a handler wrote.
type statusOf struct {
	http.ResponseWriter
	status int
}

func (s *statusOf) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusOf) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// modulePage serves the test's page and, under /nm/, the packages of
// nodeModules as a browser loads ES modules: a package or one of its entry
// points is redirected to the file its package.json exports for import
// (so the module's relative imports resolve from where it is), a file is
// served as it is, and an import without extension is redirected to its
// file.
func modulePage(nodeModules string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(screenPage))
	})
	mux.HandleFunc("/nm/", func(w http.ResponseWriter, r *http.Request) {
		rel := strings.TrimPrefix(path.Clean(r.URL.Path), "/nm/")
		file := filepath.Join(nodeModules, filepath.FromSlash(rel))
		if st, err := os.Stat(file); err == nil && !st.IsDir() {
			if strings.HasSuffix(file, ".js") || strings.HasSuffix(file, ".mjs") {
				w.Header().Set("Content-Type", "text/javascript")
			}
			http.ServeFile(w, r, file)
			return
		}
		parts := strings.SplitN(rel, "/", 3)
		pkg, sub := parts[0], parts[1:]
		if strings.HasPrefix(pkg, "@") && len(parts) > 1 {
			pkg, sub = parts[0]+"/"+parts[1], parts[2:]
		}
		if target, ok := entryPoint(filepath.Join(nodeModules, pkg), "."+strings.TrimSuffix("/"+strings.Join(sub, "/"), "/")); ok {
			http.Redirect(w, r, "/nm/"+pkg+"/"+strings.TrimPrefix(target, "./"), http.StatusFound)
			return
		}
		for _, ext := range []string{".js", ".mjs", "/index.js"} { // a bundler's import without extension (rxjs's)
			if st, err := os.Stat(file + filepath.FromSlash(ext)); err == nil && !st.IsDir() {
				http.Redirect(w, r, "/nm/"+rel+ext, http.StatusFound)
				return
			}
		}
		http.NotFound(w, r)
	})
	return mux
}

// entryPoint is the file a package's package.json exports as entry point
// sub ("." or "./x") for a browser's import, or its module field.
func entryPoint(dir, sub string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", false
	}
	var p struct {
		Exports json.RawMessage `json:"exports"`
		Module  string          `json:"module"`
	}
	if json.Unmarshal(b, &p) != nil {
		return "", false
	}
	var exports map[string]json.RawMessage
	if json.Unmarshal(p.Exports, &exports) == nil {
		if e, ok := exports[sub]; ok {
			return condition(e)
		}
	}
	if sub == "." && p.Module != "" {
		return p.Module, true
	}
	return "", false
}

// condition resolves an export's conditions for a browser's import.
func condition(e json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(e, &s) == nil {
		return s, true
	}
	var conds map[string]json.RawMessage
	if json.Unmarshal(e, &conds) != nil {
		return "", false
	}
	for _, c := range []string{"browser", "module", "import", "default"} {
		if v, ok := conds[c]; ok {
			if s, ok := condition(v); ok {
				return s, true
			}
		}
	}
	return "", false
}

// screenPage asks a screen (the viewer's projects with their members) with
// the library its URL's query names, with GET, and shows what it got.
const screenPage = `<!doctype html>
<html><head><title>screen</title>
<script>
globalThis.__DEV__ = true; // Apollo's development mode
globalThis.process = { env: { NODE_ENV: 'development' } }; // what a bundler puts in urql's
window.__logs = [];
for (const k of ['warn', 'error']) {
  const orig = console[k];
  console[k] = (...args) => { window.__logs.push(k + ': ' + args.map(String).join(' ')); orig.apply(console, args); };
}
</script>
<script type="importmap">
{"imports": {
  "@apollo/client": "/nm/@apollo/client", "@apollo/client/": "/nm/@apollo/client/",
  "@urql/core": "/nm/@urql/core", "@0no-co/graphql.web": "/nm/@0no-co/graphql.web", "wonka": "/nm/wonka",
  "graphql": "/nm/graphql", "graphql-tag": "/nm/graphql-tag", "rxjs": "/nm/rxjs", "tslib": "/nm/tslib",
  "optimism": "/nm/optimism", "@wry/caches": "/nm/@wry/caches", "@wry/equality": "/nm/@wry/equality",
  "@wry/trie": "/nm/@wry/trie", "@wry/context": "/nm/@wry/context"
}}
</script>
<script type="module">
const p = new URLSearchParams(location.search);
const headers = { authorization: 'Bearer ' + p.get('token') };
const query = 'query Screen { me { id name projects(first: 3) { edges { cursor node { id name members { role user { id name } } } } } } }';
try {
  let data;
  if (p.get('lib') === 'apollo') {
    const { ApolloClient, InMemoryCache, HttpLink, gql } = await import('@apollo/client');
    const client = new ApolloClient({ link: new HttpLink({ uri: p.get('api'), useGETForQueries: true, headers }), cache: new InMemoryCache() });
    data = (await client.query({ query: gql(query), fetchPolicy: 'network-only' })).data;
  } else {
    const { Client, fetchExchange, gql } = await import('@urql/core');
    const client = new Client({ url: p.get('api'), exchanges: [fetchExchange], preferGetMethod: true, fetchOptions: { headers } });
    const r = await client.query(gql(query), {}).toPromise();
    if (r.error) throw r.error;
    data = r.data;
  }
  window.__result = JSON.stringify(data);
} catch (e) {
  window.__result = 'error: ' + e;
}
document.body.classList.add('done');
</script>
</head><body></body></html>`
