package e2e

import (
	"bytes"
	"context"
	"fmt"
	"github.com/taskgraph/taskgraph/app"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// dataDirState returns the names and contents of a data directory's
// store files (the snapshot and the journal), to show that nothing
// changed them.
func dataDirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "task-manager.*"))
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		state[filepath.Base(f)] = string(b)
	}
	return state
}

// mustBeRefusedAsInUse fails the test unless err (or the output of a
// command) says the data directory is in use and names its holder.
func mustBeRefusedAsInUse(t *testing.T, what string, err error, out string, pid int, command string) {
	t.Helper()
	msg := out
	if err != nil {
		msg += err.Error()
	}
	for _, want := range []string{"is in use by another taskgraph process", fmt.Sprintf("pid %d", pid), "command " + command, "started "} {
		if !strings.Contains(msg, want) {
			t.Fatalf("%s: %v\n%s\nwant a refusal saying %q", what, err, out, want)
		}
	}
}

// runBriefly runs the server or a command with args for at most a minute
// (a server that is not refused serves until then) and returns its error.
func runBriefly(t *testing.T, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return app.Run(ctx, app.ReadEnv(), args, strings.NewReader(""), io.Discard, io.Discard)
}

// One process owns a data directory: while a server runs on it, a second
// server, export and import (in this process or another) are refused with
// a message naming the holder, and change nothing in it; the server goes
// on, and once it stops the directory is free. Before the lock a second
// process took the next journal file and the server's snapshots failed
// from then on, its writes applied but answered CONFLICT (issue 32).
func TestOneProcessOwnsTheDataDirectory(t *testing.T) {
	cleanEnv(t)
	bin := mustBuildServer(t)
	wd := t.TempDir()
	dir := filepath.Join(wd, ".taskgraph")
	srv := mustRunServer(t, bin, wd) // another process: the data directory's default is .taskgraph
	pid := srv.cmd.Process.Pid
	var p struct{ CreateProject struct{ ID string } }
	srv.mustGraphQL(t, `mutation { createProject(input: {name: "Before the intruders"}) { id } }`, nil, &p)
	// Once the server's snapshot holds the project and the journal before
	// it is dropped, nothing changes the directory until the next write.
	saved := func() bool {
		state := dataDirState(t, dir)
		return strings.Contains(state["task-manager.jsonl"], "Before the intruders") && len(state) == 2 // and one journal file
	}
	for deadline := time.Now().Add(time.Minute); !saved(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server saved no snapshot within a minute")
		}
	}
	before := dataDirState(t, dir)

	err := runBriefly(t, "-data-dir", dir)
	mustBeRefusedAsInUse(t, "a second server in this process", err, "", pid, "server")

	export := exec.Command(bin, "export")
	export.Dir = wd
	var stdout, stderr bytes.Buffer
	export.Stdout, export.Stderr = &stdout, &stderr
	err = export.Run()
	if err == nil || stdout.Len() != 0 {
		t.Fatalf("export in another process: %v, %d bytes exported; want it refused", err, stdout.Len())
	}
	mustBeRefusedAsInUse(t, "export in another process", nil, stderr.String(), pid, "server")

	err = app.Run(context.Background(), app.ReadEnv(), []string{"-data-dir", dir, "import"}, strings.NewReader(demoDump(t)), io.Discard, io.Discard)
	mustBeRefusedAsInUse(t, "import in this process", err, "", pid, "server")

	if after := dataDirState(t, dir); !maps.Equal(after, before) {
		t.Errorf("the refused processes changed the data directory: files %v, before %v", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}
	var q struct{ CreateProject struct{ ID string } }
	srv.mustGraphQL(t, `mutation { createProject(input: {name: "After the intruders"}) { id } }`, nil, &q)

	if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = srv.cmd.Wait()
	var out bytes.Buffer
	if err := app.Run(context.Background(), app.ReadEnv(), []string{"-data-dir", dir, "export"}, strings.NewReader(""), &out, io.Discard); err != nil {
		t.Fatalf("export once the server stopped: %v", err)
	}
	for _, name := range []string{"Before the intruders", "After the intruders"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("the export after the server stopped has no project %q", name)
		}
	}
}

// The lock holds within one process too (it belongs to an open file, not
// to the process), and its holder is named; a memory-only start takes no
// lock, so any number run side by side.
func TestTheLockHoldsInOneProcess(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	first := mustStart(t, "-data-dir", dir)
	for _, args := range [][]string{{"-data-dir", dir}, {"-data-dir", dir, "export"}} {
		err := runBriefly(t, args...)
		mustBeRefusedAsInUse(t, strings.Join(args, " "), err, "", os.Getpid(), "server")
	}
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "lock")); err != nil || len(b) != 0 {
		t.Fatalf("the lock file after the server stopped: %q, %v; want it empty", b, err)
	}
	second := mustStart(t, "-data-dir", dir)
	if err := second.stop(); err != nil {
		t.Fatalf("a server after the first stopped: %v", err)
	}

	wd := t.TempDir()
	t.Chdir(wd)
	a, b := mustStart(t, "-data-dir="), mustStart(t, "-data-dir=")
	for _, s := range []*server{a, b} {
		if names := projectNames(t, s.url, s.token); !slices.Contains(names, "Website relaunch") {
			t.Fatalf("a memory-only server beside another serves %q", names)
		}
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
	}
	if entries, _ := os.ReadDir(wd); len(entries) != 0 {
		t.Fatalf("memory-only servers wrote %v", entries)
	}
}
