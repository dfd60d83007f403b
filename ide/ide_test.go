package ide

import (
	"crypto/sha512"
	"encoding/base64"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestEmbeddedFilesMatchTheirIntegrity(t *testing.T) {
	seen := 0
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		seen++
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		sum := sha512.Sum384(b)
		if got := "sha384-" + base64.StdEncoding.EncodeToString(sum[:]); integrity[p] != got {
			t.Errorf("%s: integrity %q, file hashes to %q: run go generate ./ide", p, integrity[p], got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(integrity) {
		t.Errorf("%d embedded files, %d integrity entries: run go generate ./ide", seen, len(integrity))
	}
}

func newServer(t *testing.T, headers map[string]string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", Page("taskgraph", "/query", headers, Example))
	mux.Handle("GET "+Prefix, Assets())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func mustGet(t *testing.T, url string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

var (
	tagRe   = regexp.MustCompile(`<(script|link)\b[^>]*>`)
	attrRe  = regexp.MustCompile(`(\w+)="([^"]*)"`)
	nonceRe = regexp.MustCompile(`'nonce-([A-Za-z0-9+/=_-]+)'`)
)

func TestPage(t *testing.T) {
	const tok = "Bearer abc.def.ghi"
	srv := newServer(t, map[string]string{"Authorization": tok})
	res, body := mustGet(t, srv.URL+"/", nil)
	if res.StatusCode != 200 {
		t.Fatalf("GET / = %d", res.StatusCode)
	}

	t.Run("the CSP allows the server's scripts and styles only", func(t *testing.T) {
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self';", "connect-src 'self'", "frame-ancestors 'none'",
			"base-uri 'none'", "form-action 'none'", "img-src 'self' data:", "font-src 'self' data:"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
			if strings.Contains(csp, bad) {
				t.Errorf("CSP %q allows %q", csp, bad)
			}
		}
	})

	t.Run("every script and stylesheet is the server's, with the integrity of what it serves", func(t *testing.T) {
		tags := tagRe.FindAllString(body, -1)
		checked := 0
		for _, tag := range tags {
			attrs := map[string]string{}
			for _, m := range attrRe.FindAllStringSubmatch(tag, -1) {
				attrs[m[1]] = html.UnescapeString(m[2])
			}
			if attrs["rel"] == "icon" {
				if attrs["href"] != "data:," {
					t.Errorf("the icon is %q, want none (data:,)", attrs["href"])
				}
				continue
			}
			u := attrs["src"] + attrs["href"]
			if !strings.HasPrefix(u, Prefix) {
				t.Errorf("%s loads %q, not from the server", tag, u)
				continue
			}
			r, b := mustGet(t, srv.URL+u, nil)
			sum := sha512.Sum384([]byte(b))
			if want := "sha384-" + base64.StdEncoding.EncodeToString(sum[:]); r.StatusCode != 200 || attrs["integrity"] != want {
				t.Errorf("%s: GET %s = %d, integrity %q, want %q", tag, u, r.StatusCode, attrs["integrity"], want)
			}
			checked++
		}
		if checked != len(styles)+len(scripts) {
			t.Errorf("checked %d assets, the page has %d", checked, len(styles)+len(scripts))
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, "<style") || strings.Contains(body, " style=") {
			t.Error("the page has an inline script or style")
		}
	})

	t.Run("the headers are filled in, escaped", func(t *testing.T) {
		if !strings.Contains(body, `data-headers="{&#34;Authorization&#34;:&#34;Bearer abc.def.ghi&#34;}"`) {
			t.Errorf("the page lacks the headers: %s", body)
		}
		if res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control = %q; the page holds a token, it must not be stored", res.Header.Get("Cache-Control"))
		}
	})

	t.Run("the example query is filled in, escaped", func(t *testing.T) {
		m := regexp.MustCompile(`data-query="([^"]*)"`).FindStringSubmatch(body)
		if m == nil || html.UnescapeString(m[1]) != Example {
			t.Errorf("the page's data-query is %q, want the example", m)
		}
	})

	t.Run("each page has a fresh nonce, the scripts' and the CSP's", func(t *testing.T) {
		res2, body2 := mustGet(t, srv.URL+"/", nil)
		n1 := nonceRe.FindStringSubmatch(res.Header.Get("Content-Security-Policy"))
		n2 := nonceRe.FindStringSubmatch(res2.Header.Get("Content-Security-Policy"))
		if n1 == nil || n2 == nil || n1[1] == n2[1] {
			t.Fatalf("nonces %v and %v, want two different ones", n1, n2)
		}
		if !strings.Contains(body, `nonce="`+n1[1]+`"`) || !strings.Contains(body2, `nonce="`+n2[1]+`"`) {
			t.Error("the scripts do not carry their page's nonce")
		}
	})
}

func TestPageWithoutHeaders(t *testing.T) {
	_, body := mustGet(t, newServer(t, nil).URL+"/", nil)
	if !strings.Contains(body, `data-headers="{}"`) {
		t.Errorf("want empty headers: %s", body)
	}
}

func TestAssets(t *testing.T) {
	srv := newServer(t, nil)
	t.Run("an asset revalidates with its hash as ETag", func(t *testing.T) {
		res, body := mustGet(t, srv.URL+Prefix+"react.production.min.js", nil)
		if res.StatusCode != 200 || !strings.Contains(body, "18.2.0") {
			t.Fatalf("GET = %d", res.StatusCode)
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
			t.Errorf("Content-Type = %q", ct)
		}
		etag := res.Header.Get("ETag")
		if etag != `"`+integrity["vendor/react.production.min.js"]+`"` {
			t.Fatalf("ETag = %q", etag)
		}
		res, _ = mustGet(t, srv.URL+Prefix+"react.production.min.js", map[string]string{"If-None-Match": etag})
		if res.StatusCode != http.StatusNotModified {
			t.Errorf("a revalidation got %d, want 304", res.StatusCode)
		}
	})
	for _, p := range []string{Prefix + "nope.js", Prefix + "vendor/react.production.min.js", Prefix + "../ide.go", Prefix + "ide_test.go"} {
		t.Run(p+" is 404", func(t *testing.T) {
			if res, _ := mustGet(t, srv.URL+p, nil); res.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s = %d, want 404", p, res.StatusCode)
			}
		})
	}
}
