package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rs/cors"
	"github.com/taskgraph/taskgraph/graph/pipeline"
)

// Origins is the cross-origin policy of /query: which web origins' pages
// may call it from a browser. The zero value allows any origin, which grants
// nothing by itself: tokens travel in the Authorization header, never in
// cookies, so a page can only send a token it already holds, and the
// server never allows credentials.
type Origins struct {
	allowed map[string]bool // nil: any origin
}

// ParseOrigins reads a CORS_ORIGINS value: a comma-separated list of
// origins such as "https://app.example.com,http://localhost:5173". Empty or
// "*" allows any origin.
func ParseOrigins(list string) (Origins, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == "*" {
		return Origins{}, nil
	}
	o := Origins{allowed: map[string]bool{}}
	for part := range strings.SplitSeq(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		norm, ok := normalizeOrigin(part)
		if !ok {
			return Origins{}, fmt.Errorf("CORS_ORIGINS: %q is not an origin (scheme://host[:port], e.g. https://app.example.com)", part)
		}
		o.allowed[norm] = true
	}
	if len(o.allowed) == 0 {
		return Origins{}, fmt.Errorf("CORS_ORIGINS: %q names no origin", list)
	}
	return o, nil
}

// normalizeOrigin returns an origin as browsers send it in the Origin
// header: lower-case scheme and host, no default port, no path.
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// Any reports whether every origin is allowed.
func (o Origins) Any() bool { return o.allowed == nil }

// AllowedOrigin reports whether a page of origin (an Origin header's value)
// may call the API: the rule of CORS on /query, and the one a WebSocket
// upgrade's Origin check must follow too.
func (o Origins) AllowedOrigin(origin string) bool {
	if o.allowed == nil {
		return true
	}
	norm, ok := normalizeOrigin(origin)
	return ok && o.allowed[norm]
}

// Handler answers CORS preflights for h (before h sees them) and adds the
// Access-Control-Allow-* headers to allowed origins' requests: GET and
// POST with the Authorization, Content-Type and Idempotency-Key headers,
// never credentials. It refuses nothing itself: h still refuses anything
// but a JSON POST or a GET query, so a form post or a text/plain "simple"
// request, which a browser sends without a preflight, is not executed
// either, and a simple GET (no preflight, so no Authorization header)
// runs as nobody and only a query, which changes nothing.
func (o Origins) Handler(h http.Handler) http.Handler {
	opts := cors.Options{
		AllowedMethods:   []string{http.MethodGet, http.MethodPost},
		AllowedHeaders:   []string{"Authorization", "Content-Type", pipeline.IdempotencyHeader, "If-None-Match"},
		ExposedHeaders:   []string{"ETag"}, // a GET query's tag (graph/etag), for clients that keep their own
		AllowCredentials: false,
		MaxAge:           600,
	}
	if o.Any() {
		opts.AllowedOrigins = []string{"*"}
	} else {
		opts.AllowOriginFunc = o.AllowedOrigin
	}
	return cors.New(opts).Handler(h)
}
