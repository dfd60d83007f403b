package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// hostCheck is the server's rule on the Host a request names, against DNS
// rebinding: a web page whose own name an attacker points at 127.0.0.1 (or
// at a LAN address) is, to the browser, of the same origin as the server
// behind that address, so it could read GET / (the demo token) and call
// /query with it. Its requests name the attacker's host, which is none of
// the server's, and are refused with 421 Misdirected Request.
//
// Always allowed: localhost, any IP address (no DNS answer can forge one:
// a page at http://192.168.1.5:8080/ is the server's own page), the
// machine's name (os.Hostname, and NAME.local for mDNS), the name -addr
// listens on; and the names of -allowed-hosts / ALLOWED_HOSTS (an entry
// ".example.com" allows example.com and every name under it). A nil
// *hostCheck allows every Host: production without -allowed-hosts, whose
// load balancer may send any, and whose answers need a token that no
// browser attaches by itself; or -allowed-hosts=*.
type hostCheck struct {
	names   map[string]bool // lower case, no port, no trailing dot
	domains []string        // ".example.com": the domain and every name under it
	log     *slog.Logger
}

// healthPath is the one path open to every Host: a load balancer's or an
// orchestrator's probe may name the instance in any way, and the answer
// ("ok" or "table unreachable") tells nothing of the data.
const healthPath = "/healthz"

// newHostCheck returns the Host rule of a server in production mode or not,
// with the allow-list list (-allowed-hosts) and listening on listenAddr
// (-addr). It logs refusals to log (nil: slog.Default()).
func newHostCheck(production bool, list, listenAddr string, log *slog.Logger) (*hostCheck, error) {
	list = strings.TrimSpace(list)
	if list == "*" || (production && list == "") {
		return nil, nil
	}
	if log == nil {
		log = slog.Default()
	}
	c := &hostCheck{names: map[string]bool{"localhost": true}, log: log}
	if h := hostName(listenAddr); h != "" && net.ParseIP(h) == nil {
		c.names[h] = true
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		h = hostName(h)
		c.names[h] = true
		if !strings.Contains(h, ".") {
			c.names[h+".local"] = true
		}
	}
	for entry := range strings.SplitSeq(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name := strings.TrimSuffix(strings.ToLower(entry), ".")
		switch {
		case net.ParseIP(strings.Trim(name, "[]")) != nil: // allowed anyway
		case strings.HasPrefix(name, ".") && validHostName(name[1:]):
			c.domains = append(c.domains, name)
		case validHostName(name):
			c.names[name] = true
		default:
			return nil, fmt.Errorf("-allowed-hosts: %q is not a host name without port (e.g. dev.example.com, or .example.com for it and every name under it; * for any)", entry)
		}
	}
	return c, nil
}

// hostName is the host of a Host header's value (or of host:port) in lower
// case, without port, IPv6 brackets or trailing dot.
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// validHostName reports whether s is a DNS name: dot-separated labels of
// letters, digits, '-' and '_'.
func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// allows reports whether a request naming host (its Host header) is for
// this server.
func (c *hostCheck) allows(host string) bool {
	if c == nil {
		return true
	}
	name := hostName(host)
	if name == "" {
		return false
	}
	if c.names[name] || net.ParseIP(name) != nil {
		return true
	}
	for _, d := range c.domains {
		if name == d[1:] || strings.HasSuffix(name, d) {
			return true
		}
	}
	return false
}

// handler refuses, before next, every request whose Host the check does not
// allow, but for healthPath: 421 with a BAD_REQUEST error, the same on
// every path and transport (a WebSocket's upgrade request included).
func (c *hostCheck) handler(next http.Handler) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == healthPath || c.allows(r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		host := r.Host
		if len(host) > 100 {
			host = host[:100] + "…"
		}
		c.log.WarnContext(r.Context(), "refused a request for another host (DNS rebinding?)", "host", host, "path", r.URL.Path, "client", r.RemoteAddr)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusMisdirectedRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": gqlerror.List{{
			Message: fmt.Sprintf("this server does not answer to the host %q: it answers to localhost, IP addresses, "+
				"the machine's name and those of -allowed-hosts (ALLOWED_HOSTS)", host),
			Extensions: map[string]any{"code": codes.BadRequest}}}})
	})
}

// loopback reports whether an -addr listens on loopback only.
func loopback(addr string) bool {
	ip := net.ParseIP(hostName(addr))
	return ip != nil && ip.IsLoopback() || hostName(addr) == "localhost"
}

// browseURL is the URL a browser on this machine opens a server listening on
// addr at.
func browseURL(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "" || ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
