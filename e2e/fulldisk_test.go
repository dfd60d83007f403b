package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/web"
)

// diskServer is the GraphQL handler (app.NewHandler) in-process on an
// embedded store kept in a data directory with its journal (flushed per
// write), reached through the server's own client options (its retry
// policy included).
type diskServer struct {
	url, token string
	emb        *embedded.Store
	log        *testenv.LogBuffer
}

// mustDiskServer starts a diskServer on the data directory dir, loading
// what is there (as a start after a crash does).
func mustDiskServer(t *testing.T, dir string) *diskServer {
	t.Helper()
	ctx := context.Background()
	emb, err := embedded.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	s := &diskServer{emb: emb, log: &testenv.LogBuffer{}}
	logger := slog.New(slog.NewTextHandler(s.log, nil))
	store := app.NewStore(emb.Client(client.Options()...), "task-manager", logger, nil)
	if _, err := store.EnsureTable(ctx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "task-manager.jsonl")
	data := &dynamo.DataFile{Path: path, Store: store, Embedded: emb, Journal: dynamo.JournalPrefix(path), JournalSync: true}
	if _, found, err := data.Load(ctx); err != nil {
		t.Fatal(err)
	} else if !found { // the demo users
		if err := store.Import(ctx, store.Demo(time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	authn := &auth.Authenticator{Secret: []byte("a secret for the full disk tests, 32 bytes or more")}
	if s.token, err = authn.Sign("alice", time.Hour); err != nil {
		t.Fatal(err)
	}
	// The /query handler alone (no live updates: their outbox deletes would
	// be writes of their own on the full disk).
	srv := httptest.NewServer(app.NewHandler(store, authn, web.Options{Options: pipeline.Options{Deps: pipeline.Deps{Log: logger}}}))
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/"
	return s
}

// graphQL posts an operation and returns its data and its errors' codes
// and messages.
func (s *diskServer) graphQL(t *testing.T, query string, vars map[string]any) (data json.RawMessage, codes, messages []string) {
	t.Helper()
	res, err := testenv.PostURL(s.url+"query", "Bearer "+s.token, query, vars)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors {
		codes, messages = append(codes, e.Code()), append(messages, e.Message)
	}
	return res.Data, codes, messages
}

// createTask creates a task and returns the errors' codes and messages.
func (s *diskServer) createTask(t *testing.T, project, title string) (codes, messages []string) {
	t.Helper()
	_, codes, messages = s.graphQL(t, `mutation($p: ID!, $t: String!) { createTask(input: {projectId: $p, title: $t}) { id } }`,
		map[string]any{"p": project, "t": title})
	return codes, messages
}

// titles returns the titles of a project's tasks, sorted.
func (s *diskServer) titles(t *testing.T, project string) []string {
	t.Helper()
	data, codes, _ := s.graphQL(t, `query($p: ID!) { project(id: $p) { tasks(first: 100) { nodes { title } } } }`, map[string]any{"p": project})
	if len(codes) > 0 {
		t.Fatalf("reading the tasks: %v", codes)
	}
	var d struct {
		Project struct {
			Tasks struct{ Nodes []struct{ Title string } }
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, n := range d.Project.Tasks.Nodes {
		titles = append(titles, n.Title)
	}
	slices.Sort(titles)
	return titles
}

// aFullDisk runs createTask against a server whose data directory dir
// fills up (fill) and then has room again (free). Each write is answered
// OK and kept, or SERVICE_UNAVAILABLE (with no internals in its message)
// and not applied: the tasks read back, and after a restart (without a
// last snapshot, as after a crash), are exactly those answered OK. The
// SDK does not retry the refused writes (each reached the store once,
// and no CONFLICT comes of a retry); the store says once that it is
// read-only, and takes writes again by itself once it can.
func aFullDisk(t *testing.T, dir string, fill, free func(t *testing.T, s *diskServer)) {
	s := mustDiskServer(t, dir)
	data, errCodes, _ := s.graphQL(t, `mutation { createProject(input: {name: "On a full disk"}) { id } }`, nil)
	var p struct{ CreateProject struct{ ID string } }
	if err := json.Unmarshal(data, &p); err != nil || len(errCodes) > 0 {
		t.Fatalf("createProject: %v %v", errCodes, err)
	}
	project := p.CreateProject.ID
	var answered []string // titles answered OK
	create := func(title string) (ok bool) {
		t.Helper()
		got, messages := s.createTask(t, project, title)
		switch {
		case len(got) == 0:
			answered = append(answered, title)
			return true
		case len(got) == 1 && got[0] == codes.ServiceUnavailable && messages[0] == "the data store takes no writes for now; retry later":
			return false
		}
		t.Fatalf("createTask %q answered %v %q; want OK or SERVICE_UNAVAILABLE", title, got, messages)
		return false
	}
	for i := range 3 {
		if !create(fmt.Sprintf("before %d", i)) {
			t.Fatal("a write refused before the disk filled up")
		}
	}

	fill(t, s)
	refused := 0
	for i := range 20 {
		if !create(fmt.Sprintf("full %02d", i)) {
			refused++
		}
	}
	t.Logf("on the full disk %d of 20 writes were refused", refused)
	if refused == 0 {
		t.Fatal("no write was refused on a full disk")
	}
	if got := s.titles(t, project); !slices.Equal(got, answered) {
		t.Fatalf("on the full disk the project's tasks are %q; want those answered OK, %q", got, answered)
	}
	ro, why, calls := s.emb.ReadOnly()
	if !ro || !errors.Is(why, syscall.ENOSPC) || calls != refused {
		t.Fatalf("the store: read-only %v (%v), %d write calls refused for %d refused mutations; want read-only for ENOSPC, one call each (no retries)",
			ro, why, calls, refused)
	}

	free(t, s)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) { // the store probes every second
		if ro, _, _ := s.emb.ReadOnly(); !ro {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the store still refuses writes a minute after the disk had room again")
		}
	}
	if !create("after") {
		t.Fatal("a write refused once the disk had room again")
	}
	slices.Sort(answered)
	if got := s.titles(t, project); !slices.Equal(got, answered) {
		t.Fatalf("after the disk had room the project's tasks are %q; want %q", got, answered)
	}
	logs := s.log.String()
	if n := strings.Count(logs, "the embedded store is read-only"); n != 1 {
		t.Fatalf("the store said %d times that it is read-only, for %d refused writes; want once:\n%s", n, refused, logs)
	}
	if !strings.Contains(logs, "takes writes again") {
		t.Fatalf("the store did not say it takes writes again:\n%s", logs)
	}
	if strings.Contains(logs, codes.Conflict) {
		t.Fatalf("a refused write became a CONFLICT:\n%s", logs)
	}

	_ = s.emb.Close() // a crash: no last snapshot
	if got := mustDiskServer(t, dir).titles(t, project); !slices.Equal(got, answered) {
		t.Fatalf("after a restart the project's tasks are %q; want those answered OK, %q", got, answered)
	}
}

// A full disk, injected: every append of the journal fails with ENOSPC
// after writing half its record. Before issue 32 the writes were applied,
// answered INTERNAL, retried by the SDK and answered CONFLICT, and kept.
func TestAFullDiskRefusesWritesAndKeepsNoneOfThem(t *testing.T) {
	cleanEnv(t)
	aFullDisk(t, t.TempDir(), func(t *testing.T, s *diskServer) {
		s.emb.InjectJournalFault(func(op string) error {
			if op == "write" {
				return fmt.Errorf("injected: %w", syscall.ENOSPC)
			}
			return nil
		})
	}, func(t *testing.T, s *diskServer) { s.emb.InjectJournalFault(nil) })
}

// A full disk for real: the data directory on a 2 MB tmpfs of its own (a
// mount namespace, through unshare) filled up by a file, then emptied.
// Skipped where user namespaces are not allowed.
func TestAFullTmpfsRefusesWritesAndKeepsNoneOfThem(t *testing.T) {
	if dir := os.Getenv("TASKGRAPH_TEST_TMPFS"); dir != "" { // inside the namespace: dir is the tmpfs
		filler := filepath.Join(dir, "filler")
		aFullDisk(t, dir, func(t *testing.T, _ *diskServer) {
			f, err := os.Create(filler)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			chunk := make([]byte, 4096)
			for {
				if _, err := f.Write(chunk); err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						t.Fatal(err)
					}
					return
				}
			}
		}, func(t *testing.T, _ *diskServer) {
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
		})
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux (a tmpfs in a mount namespace)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare (util-linux) for a tmpfs of its own")
	}
	dir := t.TempDir()
	cmd := exec.Command(unshare, "--user", "--map-root-user", "--mount", "sh", "-c",
		`mount -t tmpfs -o size=2m tmpfs "$1" || exit 97; shift; exec "$@"`, "sh", dir,
		os.Args[0], "-test.run=^TestAFullTmpfsRefusesWritesAndKeepsNoneOfThem$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TASKGRAPH_TEST_TMPFS="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && (exit.ExitCode() == 97 || (exit.ExitCode() == 1 && bytes.HasPrefix(out, []byte("unshare:")))) {
		t.Skipf("no tmpfs of its own here (user namespaces not allowed?): %s", bytes.TrimSpace(out))
	}
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestAFullTmpfsRefusesWritesAndKeepsNoneOfThem")) {
		t.Fatalf("on a full tmpfs: %v\n%s", err, out)
	}
	if testing.Verbose() {
		_, _ = io.Copy(os.Stdout, bytes.NewReader(out))
	}
}
