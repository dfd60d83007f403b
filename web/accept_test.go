//go:build unix

package web_test

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/web"
)

// acceptChildEnv makes the test binary the server of
// TestAtTheDescriptorLimitNewConnectionsAreRefusedCleanly, with this
// RLIMIT_NOFILE.
const acceptChildEnv = "TASKGRAPH_ACCEPT_CHILD_NOFILE"

// TestAtTheDescriptorLimitNewConnectionsAreRefusedCleanly runs a server
// (net/http behind web.GuardAccept) in a child process whose open-file
// limit is lowered, opens connections until one is refused, and checks
// that the refusal is clean: the refused client sees its connection
// closed at once, every connection opened before still gets answers, the
// refusals are counted, the log says it once, and net/http logs no accept
// error (without the guard it logs "accept4: too many open files" in a
// loop while the client hangs).
func TestAtTheDescriptorLimitNewConnectionsAreRefusedCleanly(t *testing.T) {
	if os.Getenv(acceptChildEnv) != "" {
		serveAtTheLimit(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAtTheDescriptorLimitNewConnectionsAreRefusedCleanly$")
	cmd.Env = append(os.Environ(), acceptChildEnv+"=48")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	next := func() string {
		if !lines.Scan() {
			t.Fatalf("the server process ended: %v", lines.Err())
		}
		return lines.Text()
	}
	addr, ok := strings.CutPrefix(next(), "listening ")
	if !ok {
		t.Fatal("the server process did not say where it listens")
	}
	// ask sends one request on c and reads the answer.
	ask := func(c net.Conn, r *bufio.Reader) error {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return err
		}
		res, err := http.ReadResponse(r, nil)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err == nil && string(b) != "ok" {
			err = fmt.Errorf("answered %q", b)
		}
		return err
	}
	type open struct {
		c net.Conn
		r *bufio.Reader
	}
	var opened []open
	t.Cleanup(func() {
		for _, o := range opened {
			_ = o.c.Close()
		}
	})
	refused := 0
	for i := 0; i < 100 && refused < 3; i++ {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil && !strings.Contains(err.Error(), "reset") {
			t.Fatalf("dialling: %v", err)
		}
		if err != nil { // refused before the dial returned
			refused++
			continue
		}
		o := open{c, bufio.NewReader(c)}
		if err := ask(o.c, o.r); err != nil {
			// Refused: closed (reset) at once, not left waiting.
			if errors := err.Error(); !strings.Contains(errors, "reset") && !strings.Contains(errors, "EOF") && !strings.Contains(errors, "broken pipe") {
				t.Fatalf("connection %d: %v, want it closed at once", i+1, err)
			}
			_ = c.Close()
			refused++
			continue
		}
		if refused > 0 {
			t.Fatalf("connection %d was served after a refusal, with every earlier one still open", i+1)
		}
		opened = append(opened, o)
	}
	if refused == 0 || len(opened) < 10 {
		t.Fatalf("%d connections served, %d refused: the limit was not reached", len(opened), refused)
	}
	for i, o := range opened {
		if err := ask(o.c, o.r); err != nil {
			t.Fatalf("connection %d, open before the limit, failed after it: %v", i+1, err)
		}
	}
	if _, err := io.WriteString(stdin, "report\n"); err != nil {
		t.Fatal(err)
	}
	var n, logged, acceptErrors int
	if _, err := fmt.Sscanf(next(), "refused %d logged %d accept-errors %d", &n, &logged, &acceptErrors); err != nil {
		t.Fatal(err)
	}
	if n != refused || logged != 1 || acceptErrors != 0 {
		t.Errorf("the server counted %d refusals (the client saw %d), logged %d lines about them (want 1) and %d accept errors (want 0)",
			n, refused, logged, acceptErrors)
	}
}

// serveAtTheLimit is the child: an HTTP server with the guard under a low
// open-file limit. It prints where it listens, then, on "report", the
// refusals it counted and the lines its logs got.
func serveAtTheLimit(t *testing.T) {
	var limit uint64
	fmt.Sscan(os.Getenv(acceptChildEnv), &limit)
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	rl.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs, errorLog testenv.LogBuffer
	var refused atomic.Int64
	g := web.GuardAccept(ln, slog.New(slog.NewTextHandler(&logs, nil)), func() { refused.Add(1) })
	srv := &http.Server{ErrorLog: log.New(&errorLog, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })}
	go func() { _ = srv.Serve(g) }()
	fmt.Println("listening " + ln.Addr().String())
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Printf("refused %d logged %d accept-errors %d\n", refused.Load(),
			strings.Count(logs.String(), "refusing new connections"), strings.Count(errorLog.String(), "Accept error"))
	}
	_ = srv.Close()
}
