package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// A development start serves 127.0.0.1 only, and says so; one opened to
// the network warns that whoever reaches it gets the demo token.
func TestAStartListensWhereItSays(t *testing.T) {
	t.Run("a start serves 127.0.0.1 and no other address of the machine", func(t *testing.T) {
		cleanEnv(t)
		s := mustStart(t, "-data-dir=")
		defer s.stop()
		u, err := url.Parse(s.url)
		if err != nil || u.Hostname() != "127.0.0.1" {
			t.Fatalf("serving at %s, want 127.0.0.1", s.url)
		}
		addrs, err := net.InterfaceAddrs()
		if err != nil {
			t.Fatal(err)
		}
		tried := 0
		for _, a := range addrs {
			ip, ok := a.(*net.IPNet)
			if !ok || ip.IP.IsLoopback() || ip.IP.IsLinkLocalUnicast() {
				continue
			}
			tried++
			c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.IP.String(), u.Port()), 5*time.Second)
			if err == nil {
				c.Close()
				t.Errorf("the server answers on %s, not only on loopback", ip.IP)
			}
		}
		t.Logf("%d other addresses of the machine tried", tried)
		if strings.Contains(s.stderr.String(), "listening beyond this machine") {
			t.Errorf("a loopback start warns that it is open:\n%s", s.stderr)
		}
	})
	t.Run("a start opened to the network warns that whoever reaches it gets the token", func(t *testing.T) {
		cleanEnv(t)
		s := mustStart(t, "-data-dir=", "-addr=0.0.0.0:0")
		defer s.stop()
		if !strings.Contains(s.stderr.String(), "listening beyond this machine") {
			t.Errorf("no warning:\n%s", s.stderr)
		}
		if !strings.Contains(s.stdout.String(), "The GraphQL IDE at http://localhost:") {
			t.Errorf("the banner does not name the local URL:\n%s", s.stdout)
		}
	})
}

// rebindingClient is a browser after DNS rebinding: whatever name a URL
// names, it connects to the server at addr (host:port).
func rebindingClient(addr string) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// hostRequest is one transport's request to the server, sent naming a host.
type hostRequest struct {
	name string
	// send sends it to base (http://<host>) and returns the HTTP status, the
	// body and, for an operation that ran, whether its answer is Alice's.
	send func(t *testing.T, c *http.Client, base, token string) (status int, body string, ran bool)
}

// hostRequests are a request of each transport and route of the server.
func hostRequests() []hostRequest {
	post := func(accept string) func(t *testing.T, c *http.Client, base, token string) (int, string, bool) {
		return func(t *testing.T, c *http.Client, base, token string) (int, string, bool) {
			raw := testenv.Send(t, map[string]any{"query": "{ me { name } }"}, testenv.To(base+"/query"), testenv.HTTPClient(c),
				testenv.Accept(accept), testenv.Bearer(token))
			return raw.Status, string(raw.Body), raw.Status == http.StatusOK && strings.Contains(string(raw.Body), "Alice Example")
		}
	}
	ws := func(protocol string) func(t *testing.T, c *http.Client, base, token string) (int, string, bool) {
		return func(t *testing.T, c *http.Client, base, token string) (int, string, bool) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/query",
				&websocket.DialOptions{HTTPClient: c, Subprotocols: []string{protocol}})
			if err != nil {
				if resp == nil {
					t.Fatalf("no answer to the upgrade: %v", err)
				}
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b), false
			}
			defer conn.CloseNow()
			init, _ := json.Marshal(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}})
			if err := conn.Write(ctx, websocket.MessageText, init); err != nil {
				t.Fatal(err)
			}
			_, m, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return http.StatusSwitchingProtocols, string(m), strings.Contains(string(m), `"connection_ack"`)
		}
	}
	return []hostRequest{
		{"GET / (the IDE and the demo token)", func(t *testing.T, c *http.Client, base, token string) (int, string, bool) {
			req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
			return do(t, c, req, token)
		}},
		{"POST /query", post("application/json")},
		{"POST /query over server-sent events", post("text/event-stream")},
		{"POST /query for multipart/mixed parts", post("multipart/mixed;deferSpec=20220824, application/json")},
		{"GET /query", func(t *testing.T, c *http.Client, base, token string) (int, string, bool) {
			req, _ := http.NewRequest(http.MethodGet, base+"/query?query="+url.QueryEscape("{ me { name } }"), nil)
			req.Header.Set("Authorization", "Bearer "+token)
			return do(t, c, req, "Alice Example")
		}},
		{"WebSocket graphql-transport-ws", ws("graphql-transport-ws")},
		{"WebSocket graphql-ws", ws("graphql-ws")},
	}
}

// do sends req with c and reports whether the answer's body has want.
func do(t *testing.T, c *http.Client, req *http.Request, want string) (int, string, bool) {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b), res.StatusCode == http.StatusOK && strings.Contains(string(b), want)
}

// mustBeMisdirected fails the test unless the answer is the Host check's
// refusal: 421 with one BAD_REQUEST error, and nothing of the server's.
func mustBeMisdirected(t *testing.T, status int, body, token string) {
	t.Helper()
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil || status != http.StatusMisdirectedRequest ||
		len(out.Errors) != 1 || out.Errors[0].Extensions.Code != codes.BadRequest || out.Data != nil {
		t.Fatalf("HTTP %d %.300s; want 421 with one BAD_REQUEST error", status, body)
	}
	if strings.Contains(body, token) || strings.Contains(body, "Alice") {
		t.Fatalf("the refusal carries the server's data: %s", body)
	}
}

// A page whose name resolves to the development server (DNS rebinding)
// gets nothing from it, on any route or transport: its requests name its
// own host. The server's names, the configured one and /healthz pass.
func TestAForeignHostIsRefusedOnEveryRoute(t *testing.T) {
	cleanEnv(t)
	s := mustStart(t, "-data-dir=", "-allowed-hosts=dev.example.test")
	defer s.stop()
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	c := rebindingClient(u.Host)
	port := u.Port()
	for _, r := range hostRequests() {
		for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.nip.io:" + port, "dev.example.test.evil.example:" + port} {
			t.Run(r.name+" naming "+host+" is refused", func(t *testing.T) {
				status, body, _ := r.send(t, c, "http://"+host, s.token)
				mustBeMisdirected(t, status, body, s.token)
			})
		}
		for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "dev.example.test:" + port, "localhost"} {
			t.Run(r.name+" naming "+host+" is served", func(t *testing.T) {
				if status, body, ran := r.send(t, c, "http://"+host, s.token); !ran {
					t.Fatalf("HTTP %d %.300s", status, body)
				}
			})
		}
	}
	t.Run("healthz answers any host", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, "http://evil.example:"+port+"/healthz", nil)
		if status, body, ok := do(t, c, req, "ok"); !ok {
			t.Fatalf("HTTP %d %s", status, body)
		}
	})
	if !strings.Contains(s.stderr.String(), "refused a request for another host") {
		t.Errorf("no log line of the refusals:\n%s", s.stderr)
	}
}

// In production the Host is the load balancer's affair unless
// -allowed-hosts names the API's names; then the same rule holds.
func TestProductionChecksTheHostWhenTold(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		refused bool
	}{
		{"without -allowed-hosts any host is served", nil, false},
		{"with -allowed-hosts another host is refused", []string{"-allowed-hosts=api.example.test"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("JWT_SECRET", "a production secret of enough length for the test")
			s := mustStart(t, append([]string{"-production", "-data-dir=", "-addr=127.0.0.1:0"}, tc.args...)...)
			defer s.stop()
			u, _ := url.Parse(s.url)
			c := rebindingClient(u.Host)
			token := mustSignAlice(t)
			post := hostRequests()[1]
			status, body, ran := post.send(t, c, "http://evil.example:"+u.Port(), token)
			if tc.refused {
				mustBeMisdirected(t, status, body, token)
				if status, body, ran := post.send(t, c, "http://api.example.test", token); !ran {
					t.Fatalf("the allowed name: HTTP %d %.300s", status, body)
				}
			} else if !ran {
				t.Fatalf("HTTP %d %.300s", status, body)
			}
		})
	}
}

// mustSignAlice signs a token for alice with the JWT_SECRET set.
func mustSignAlice(t *testing.T) string {
	t.Helper()
	tok, err := (&auth.Authenticator{Secret: []byte(os.Getenv("JWT_SECRET"))}).Sign("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// DNS rebinding in a real browser: Chromium resolves the attacker's name to
// the development server (--host-resolver-rules), as the attacker's DNS
// would once the attacker's page has loaded. The page's own requests, same
// origin to the browser, get the 421 refusal, not the IDE with the token;
// the same browser opening localhost gets the IDE.
func TestARebindingPageInABrowserGetsNoToken(t *testing.T) {
	chrome := mustFindChromium(t)
	cleanEnv(t)
	s := mustStart(t, "-data-dir=")
	defer s.stop()
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox,
		chromedp.Flag("host-resolver-rules", "MAP rebind.attacker.example 127.0.0.1"))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()
	// get fetches path from the page's origin as its script would, and
	// returns the status and the body.
	const get = `(() => { const x = new XMLHttpRequest(); x.open('GET', %q, false); x.send(); return x.status + ' ' + x.responseText })()`
	for _, tc := range []struct {
		origin string
		want   string // the status and what the answer holds
	}{
		{"http://rebind.attacker.example:" + u.Port(), "421 "},
		{"http://localhost:" + u.Port(), "200 "},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(tc.origin+"/")); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(get, "/")))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got, tc.want) || strings.Contains(got, s.token) != (tc.want == "200 ") {
			t.Errorf("a page of %s reading / got %.200q; want %s, the token only from the server's own name", tc.origin, got, tc.want)
		}
	}
}
