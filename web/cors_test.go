package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/web"
)

// mustCORSHandler returns the real /query handler of e with the origins
// that CORS_ORIGINS=list would allow.
func mustCORSHandler(t *testing.T, e *testenv.Env, list string) http.Handler {
	t.Helper()
	origins, err := web.ParseOrigins(list)
	if err != nil {
		t.Fatalf("ParseOrigins(%q): %v", list, err)
	}
	return e.NewHTTPHandler(web.Options{CORS: origins})
}

func preflight(h http.Handler, origin, headers string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodOptions, "/query", nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", http.MethodPost)
	req.Header.Set("Access-Control-Request-Headers", headers)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestCORSPreflight(t *testing.T) {
	e := testenv.New(t)
	const allHeaders = "authorization,content-type,idempotency-key,if-none-match"
	for _, c := range []struct {
		name, origins, origin, headers string
		allowed                        bool
		allowOrigin                    string // the Access-Control-Allow-Origin wanted when allowed
	}{
		{"any origin by default", "", "http://localhost:5173", allHeaders, true, "*"},
		{"a listed origin", "https://app.example.com, http://localhost:5173", "http://localhost:5173", allHeaders, true, "http://localhost:5173"},
		{"a listed origin written with its default port", "https://app.example.com:443", "https://app.example.com", allHeaders, true, "https://app.example.com"},
		{"an origin not listed", "https://app.example.com", "http://localhost:5173", allHeaders, false, ""},
		{"another port of a listed host", "http://localhost:5173", "http://localhost:5174", allHeaders, false, ""},
		{"the null origin of a sandboxed page", "https://app.example.com", "null", allHeaders, false, ""},
		{"a header that is not allowed", "", "http://localhost:5173", "authorization,x-custom", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := preflight(mustCORSHandler(t, e, c.origins), c.origin, c.headers)
			h := rec.Header()
			if rec.Code == http.StatusMethodNotAllowed {
				t.Fatalf("the preflight reached the POST-only guard: %d", rec.Code)
			}
			if got := h.Get("Access-Control-Allow-Credentials"); got != "" {
				t.Errorf("Access-Control-Allow-Credentials = %q, want none ever", got)
			}
			if !c.allowed {
				for k := range h {
					if strings.HasPrefix(k, "Access-Control-Allow-") {
						t.Errorf("a refused preflight got %s: %q", k, h.Get(k))
					}
				}
				return
			}
			if got := h.Get("Access-Control-Allow-Origin"); got != c.allowOrigin {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, c.allowOrigin)
			}
			if got := h.Get("Access-Control-Allow-Methods"); got != http.MethodPost {
				t.Errorf("Access-Control-Allow-Methods = %q, want POST", got)
			}
			allowed := strings.ToLower(h.Get("Access-Control-Allow-Headers"))
			for want := range strings.SplitSeq(c.headers, ",") {
				if !strings.Contains(allowed, want) {
					t.Errorf("Access-Control-Allow-Headers = %q, lacks %s", allowed, want)
				}
			}
		})
	}
}

func TestCORSRequests(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	tok := e.Token(t, "alice")
	// post posts body as it is (a page's request of any media type) from a
	// page of origin.
	post := func(h http.Handler, origin, contentType, body string) testenv.Raw {
		return e.Send(t, nil, testenv.Via(h), testenv.RawBody(http.MethodPost, contentType, body), testenv.Header("Origin", origin),
			testenv.Bearer(tok))
	}

	t.Run("an allowed origin's request is answered with its origin allowed", func(t *testing.T) {
		rec := post(mustCORSHandler(t, e, "http://localhost:5173"), "http://localhost:5173", "application/json", `{"query":"{ me { name } }"}`)
		if rec.Status != http.StatusOK || !strings.Contains(string(rec.Body), `"name":"Alice Example"`) {
			t.Fatalf("got %d %s", rec.Status, rec.Body)
		}
		if got := rec.Header.Get("Access-Control-Allow-Origin"); got != "http://localhost:5173" {
			t.Errorf("Access-Control-Allow-Origin = %q", got)
		}
		if got := rec.Header.Get("Access-Control-Allow-Credentials"); got != "" {
			t.Errorf("Access-Control-Allow-Credentials = %q, want none", got)
		}
	})
	t.Run("a refused origin's request gets no CORS headers, so its page cannot read the answer", func(t *testing.T) {
		rec := post(mustCORSHandler(t, e, "https://app.example.com"), "http://localhost:5173", "application/json", `{"query":"{ me { name } }"}`)
		if got := rec.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("Access-Control-Allow-Origin = %q, want none", got)
		}
	})

	// A page of any origin may send these "simple" requests without a
	// preflight (a form post, a fetch with text/plain): none may execute.
	mutation := `mutation { updateProfile(input: {name: "Mallory"}) { name } }`
	for _, c := range []struct{ name, contentType, body string }{
		{"a text/plain post", "text/plain", `{"query":` + quote(mutation) + `}`},
		{"a form post", "application/x-www-form-urlencoded", url.Values{"query": {mutation}}.Encode()},
		{"a multipart form post", "multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"query\"\r\n\r\n" + mutation + "\r\n--x--\r\n"},
	} {
		t.Run(c.name+" from another origin is refused and changes nothing", func(t *testing.T) {
			rec := post(mustCORSHandler(t, e, ""), "https://evil.example", c.contentType, c.body)
			if rec.Status != http.StatusUnsupportedMediaType {
				t.Errorf("status = %d, want 415: %s", rec.Status, rec.Body)
			}
			var me struct{ Me struct{ Name string } }
			e.MustQuery(t, "alice", `{ me { name } }`, nil, &me)
			if me.Me.Name != "Alice Example" {
				t.Fatalf("alice's name is now %q: the refused request ran", me.Me.Name)
			}
		})
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func TestParseOrigins(t *testing.T) {
	for _, c := range []struct {
		list    string
		ok      bool
		allowed []string
		refused []string
	}{
		{"", true, []string{"http://localhost:5173", "https://x.example", "null"}, nil},
		{"*", true, []string{"https://x.example"}, nil},
		{"https://App.Example.com/, http://localhost:5173", true,
			[]string{"https://app.example.com", "http://localhost:5173"}, []string{"https://app.example.com:8443", "http://app.example.com", "null", ""}},
		{"http://[::1]:3000", true, []string{"http://[::1]:3000"}, []string{"http://[::1]:3001"}},
		{"app.example.com", false, nil, nil},
		{"https://app.example.com/path", false, nil, nil},
		{"ftp://app.example.com", false, nil, nil},
		{"https://user@app.example.com", false, nil, nil},
		{" , ", false, nil, nil},
	} {
		t.Run(c.list, func(t *testing.T) {
			o, err := web.ParseOrigins(c.list)
			if (err == nil) != c.ok {
				t.Fatalf("ParseOrigins(%q) error = %v, want ok %v", c.list, err, c.ok)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "CORS_ORIGINS") {
					t.Errorf("the error %q does not name CORS_ORIGINS", err)
				}
				return
			}
			for _, a := range c.allowed {
				if !o.AllowedOrigin(a) {
					t.Errorf("AllowedOrigin(%q) = false, want true", a)
				}
			}
			for _, r := range c.refused {
				if o.AllowedOrigin(r) {
					t.Errorf("AllowedOrigin(%q) = true, want false", r)
				}
			}
		})
	}
}

// TestCORSGET: a GET query is a "simple" request, which a page of any
// origin can make a browser send without a preflight, but without the
// token (no cookies: bearer tokens only), so it runs as nobody; a GET with
// the Authorization header needs a preflight, which only allowed origins
// pass; and a GET mutation runs nowhere.
func TestCORSGET(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	h := mustCORSHandler(t, e, "https://app.example.com")
	get := func(origin, token, query string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/query?"+url.Values{"query": {query}}.Encode(), nil)
		req.Header.Set("Origin", origin)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	t.Run("a foreign page's simple GET runs as nobody, its answer unreadable there", func(t *testing.T) {
		rec := get("https://evil.example", "", "{ me { name } }")
		if !strings.Contains(rec.Body.String(), codes.Unauthenticated) || strings.Contains(rec.Body.String(), "Alice") {
			t.Errorf("%d %s", rec.Code, rec.Body)
		}
		if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("Access-Control-Allow-Origin = %q, want none", got)
		}
	})
	t.Run("a foreign page's GET mutation is 405 and changes nothing", func(t *testing.T) {
		rec := get("https://evil.example", e.Token(t, "alice"), `mutation { updateProfile(input: {name: "Mallory"}) { name } }`)
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%d %s", rec.Code, rec.Body)
		}
		var me struct{ Me struct{ Name string } }
		e.MustQuery(t, "alice", `{ me { name } }`, nil, &me)
		if me.Me.Name != "Alice Example" {
			t.Fatalf("alice's name is now %q", me.Me.Name)
		}
	})
	for _, c := range []struct {
		origin  string
		allowed bool
	}{{"https://app.example.com", true}, {"https://evil.example", false}} {
		t.Run("the preflight of a GET with a token from "+c.origin, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodOptions, "/query", nil)
			req.Header.Set("Origin", c.origin)
			req.Header.Set("Access-Control-Request-Method", http.MethodGet)
			req.Header.Set("Access-Control-Request-Headers", "authorization")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			got := rec.Header().Get("Access-Control-Allow-Methods")
			if c.allowed != (got == http.MethodGet) || rec.Header().Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("Access-Control-Allow-Methods %q, Allow-Origin %q; allowed: %v", got, rec.Header().Get("Access-Control-Allow-Origin"), c.allowed)
			}
		})
	}
	t.Run("an allowed origin's GET with its token reads its answer", func(t *testing.T) {
		rec := get("https://app.example.com", e.Token(t, "alice"), "{ me { name } }")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Alice Example") ||
			rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" {
			t.Errorf("%d %s %v", rec.Code, rec.Body, rec.Header())
		}
	})
}

// TestCORSExposesTheETag: a page of another origin reads a GET query's
// ETag (a client keeping its own cache sends it back as If-None-Match,
// which the preflight allows: TestCORSPreflight).
func TestCORSExposesTheETag(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	raw := e.Send(t, map[string]any{"query": "{ me { id name } }"}, testenv.GET(), e.As("alice"),
		testenv.Via(mustCORSHandler(t, e, "")), testenv.Header("Origin", "http://localhost:5173"))
	if raw.Header.Get("ETag") == "" || !strings.Contains(strings.ToLower(raw.Header.Get("Access-Control-Expose-Headers")), "etag") {
		t.Errorf("a GET query from another origin: ETag %q, Access-Control-Expose-Headers %q; want both",
			raw.Header.Get("ETag"), raw.Header.Get("Access-Control-Expose-Headers"))
	}
}
