// Package ide serves the GraphiQL IDE: its page and its scripts and styles,
// embedded in the binary (pinned npm releases, copied by `go generate`), so
// that the IDE works offline and under a strict Content-Security-Policy.
package ide

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"time"
)

//go:generate go run ./internal/gen

//go:embed vendor static
var files embed.FS

// Prefix is the path the IDE's assets are served under.
const Prefix = "/ide/"

// CSP returns the Content-Security-Policy of the IDE's page: scripts,
// styles and requests to the server only (connect-src 'self' covers
// same-origin WebSockets), images and fonts from the server or data: URLs,
// no frames, no <base>, no form submission. The style nonce, new for each
// page, admits the one <style> element GraphiQL makes itself (its dialogs'
// scroll lock); boot.js hands the nonce to it.
func CSP(nonce string) string {
	return "default-src 'none'; script-src 'self'; style-src 'self' 'nonce-" + nonce + "'; connect-src 'self'; " +
		"img-src 'self' data:; font-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
}

// scripts and styles are the page's assets, in load order (file names
// under vendor/ or static/).
var (
	styles  = []string{"vendor/graphiql.min.css", "static/ide.css"}
	scripts = []string{"vendor/react.production.min.js", "vendor/react-dom.production.min.js",
		"vendor/graphiql.min.js", "static/boot.js"}
)

var page = template.Must(template.New("ide").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<link rel="icon" href="data:,">
{{- range .Styles}}
<link rel="stylesheet" href="{{.URL}}" integrity="{{.Integrity}}">
{{- end}}
</head>
<body>
<div id="graphiql" data-endpoint="{{.Endpoint}}" data-headers="{{.Headers}}" data-query="{{.Query}}"><div class="loading">Loading…</div></div>
{{- range .Scripts}}
<script src="{{.URL}}" integrity="{{.Integrity}}" nonce="{{$.Nonce}}"></script>
{{- end}}
</body>
</html>
`))

type link struct {
	URL       string
	Integrity string
}

func links(names []string) []link {
	out := make([]link, len(names))
	for i, n := range names {
		out[i] = link{URL: Prefix + path.Base(n), Integrity: integrity[n]}
	}
	return out
}

// Page returns the handler of the IDE's page: GraphiQL against endpoint,
// with headers (e.g. a demo Authorization) filled in its headers pane and
// query (e.g. Example) in its editor on a first visit, when the browser has
// no saved tabs ("": GraphiQL's welcome text).
func Page(title, endpoint string, headers map[string]string, query string) http.Handler {
	if headers == nil {
		headers = map[string]string{}
	}
	h, err := json.Marshal(headers)
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	data := struct {
		Title, Endpoint, Headers, Query, Nonce string
		Styles, Scripts                        []link
	}{Title: title, Endpoint: endpoint, Headers: string(h), Query: query, Styles: links(styles), Scripts: links(scripts)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := data
		d.Nonce = rand.Text()
		var buf bytes.Buffer
		if err := page.Execute(&buf, d); err != nil {
			http.Error(w, "the IDE page failed", http.StatusInternalServerError)
			return
		}
		hd := w.Header()
		hd.Set("Content-Type", "text/html; charset=utf-8")
		hd.Set("Content-Security-Policy", CSP(d.Nonce))
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store") // it may hold a token
		_, _ = w.Write(buf.Bytes())
	})
}

// Assets returns the handler of the IDE's scripts, styles and their
// licences under Prefix. Each answer carries its SRI hash as ETag, so that
// browsers revalidate cheaply and never keep a stale copy.
func Assets() http.Handler {
	byName := map[string]string{} // served name -> embedded path
	for p := range integrity {
		byName[path.Base(p)] = p
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := byName[path.Base(r.URL.Path)]
		if !ok || path.Dir(r.URL.Path)+"/" != Prefix {
			http.NotFound(w, r)
			return
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Cache-Control", "no-cache")
		hd.Set("ETag", `"`+integrity[p]+`"`)
		http.ServeContent(w, r, p, time.Time{}, bytes.NewReader(b))
	})
}
