package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/live"
)

// cluster is a local cluster run by scripts/cluster: DynamoDB Local (the
// one scripts/test started), three NATS nodes, three taskgraph instances.
type cluster struct {
	dir    string
	env    []string
	urls   []string // the instances' base URLs
	nats   string   // NATS_URL
	secret string
}

// startCluster starts the cluster on free ports with a table of its own,
// and stops it when the test ends.
func startCluster(t *testing.T, ddb string) *cluster {
	t.Helper()
	p := freePorts(t, 9)
	c := &cluster{dir: t.TempDir(), secret: "the cluster test's secret, 32 bytes or more"}
	if err := os.WriteFile(filepath.Join(c.dir, "jwt-secret"), []byte(c.secret), 0o600); err != nil {
		t.Fatal(err)
	}
	list := func(ps []int) string { return strings.Trim(fmt.Sprint(ps), "[]") }
	c.env = append(os.Environ(), "CLUSTER_DIR="+c.dir, "DYNAMODB_ENDPOINT="+ddb,
		fmt.Sprintf("TABLE_NAME=cluster-%d", time.Now().UnixNano()),
		"HTTP_PORTS="+list(p[0:3]), "NATS_PORTS="+list(p[3:6]), "ROUTE_PORTS="+list(p[6:9]))
	var nu []string
	for i := range 3 {
		c.urls = append(c.urls, fmt.Sprintf("http://127.0.0.1:%d", p[i]))
		nu = append(nu, fmt.Sprintf("nats://127.0.0.1:%d", p[3+i]))
	}
	c.nats = strings.Join(nu, ",")
	t.Cleanup(func() {
		if out, err := c.script("stop"); err != nil {
			t.Errorf("scripts/cluster stop: %v\n%s", err, out)
		}
		if t.Failed() {
			c.dumpLogs(t)
		}
	})
	c.mustScript(t, "start")
	return c
}

func (c *cluster) script(args ...string) (string, error) {
	cmd := exec.Command("../../scripts/cluster", args...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *cluster) mustScript(t *testing.T, args ...string) {
	t.Helper()
	if out, err := c.script(args...); err != nil {
		t.Fatalf("scripts/cluster %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// kill kills a part (nats-2, taskgraph-1) with SIGKILL and waits until it
// is gone.
func (c *cluster) kill(t *testing.T, part string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, part+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing %s (pid %d): %v", part, pid, err)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs after SIGKILL", part, pid)
		}
	}
}

func (c *cluster) dumpLogs(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join(c.dir, "logs", "*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		t.Logf("== %s (its end)\n%s", filepath.Base(l), b)
	}
}

// freePorts returns n ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// streamLeader returns the name of the NATS node that leads the event
// stream (nats-1, …).
func (c *cluster) streamLeader(t *testing.T) string {
	t.Helper()
	js, done := c.jetStream(t)
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, live.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil || info.Cluster.Leader == "" || info.Config.Replicas != 3 {
		t.Fatalf("the stream's info: %+v, %v; want a leader and 3 replicas", info, err)
	}
	return info.Cluster.Leader
}

func (c *cluster) jetStream(t *testing.T) (jetstream.JetStream, func()) {
	t.Helper()
	nc, err := nats.Connect(c.nats)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js, nc.Close
}

// streamEvent is what the test reads of an event in the stream.
type streamEvent struct {
	Seq       uint64
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	SubjectID string `json:"subjectId"`
}

// projectStream reads every event of project in the stream, in order.
func (c *cluster) projectStream(t *testing.T, project string) ([]streamEvent, error) {
	t.Helper()
	u, err := domain.ParseProjectID(project)
	if err != nil {
		t.Fatal(err)
	}
	subj := live.SubjectPrefix + u
	js, done := c.jetStream(t)
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, live.StreamName)
	if err != nil {
		return nil, err
	}
	last, err := st.GetLastMsgForSubject(ctx, subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var evs []streamEvent
	for seq := uint64(1); seq <= last.Sequence; {
		msg, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj)) // the next of the subject from seq
		if err != nil {
			return nil, fmt.Errorf("reading the stream at %d: %w (after %d events)", seq, err, len(evs))
		}
		var ev streamEvent
		if err := json.Unmarshal(msg.Data, &ev); err != nil {
			t.Fatal(err)
		}
		ev.Seq = msg.Sequence
		evs = append(evs, ev)
		seq = msg.Sequence + 1
	}
	return evs, nil
}
