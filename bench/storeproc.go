package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/taskgraph/taskgraph/dynamo/embedded"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// StoreEnv is the environment variable that turns a process started by
// StartStoreProcess into the embedded store: ServeStoreIfAsked sees it.
const StoreEnv = "TASKGRAPH_BENCH_STORE"

const endpointLine = "taskgraph-bench-store "

// ServeStoreIfAsked serves the embedded store and exits when the
// process was started by StartStoreProcess; otherwise it returns at once.
// Call it first thing in TestMain (or main) of the binary that measures, so
// that the binary can re-execute itself as its own store.
func ServeStoreIfAsked() {
	if os.Getenv(StoreEnv) == "" {
		return
	}
	emb, err := embedded.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench store:", err)
		os.Exit(1)
	}
	fmt.Println(endpointLine + emb.Endpoint)
	// Serve until the parent closes stdin (or dies).
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// StoreProcess is the embedded store running in a child process, so that
// its CPU time stays out of the measuring process's own (getrusage) and the
// two compete for cores only as a server and its database would.
type StoreProcess struct {
	// Endpoint is the store's URL on a loopback port.
	Endpoint string
	cmd      *exec.Cmd
	stdin    io.WriteCloser
}

// StartStoreProcess re-executes the running binary with StoreEnv set and
// waits for it to report its endpoint. The binary must call
// ServeStoreIfAsked first thing. Stop it with Stop.
func StartStoreProcess(ctx context.Context) (*StoreProcess, error) {
	cmd, stdin, stdout, err := startChild(StoreEnv + "=1")
	if err != nil {
		return nil, err
	}
	p := &StoreProcess{cmd: cmd, stdin: stdin}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if ep, ok := strings.CutPrefix(sc.Text(), endpointLine); ok {
				found <- ep
				break
			}
		}
		close(found)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case ep, ok := <-found:
		if ok {
			p.Endpoint = ep
			return p, nil
		}
		p.Stop()
		return nil, errors.New("the store process exited without reporting its endpoint")
	case <-ctx.Done():
		p.Stop()
		return nil, fmt.Errorf("waiting for the store process: %w", ctx.Err())
	}
}

// PID returns the store process's id.
func (p *StoreProcess) PID() int { return p.cmd.Process.Pid }

// CPU returns the CPU time (user + system) the store process has used so
// far, and false where it cannot be read (it reads /proc, Linux only).
func (p *StoreProcess) CPU() (time.Duration, bool) { return processCPU(p.cmd.Process.Pid) }

// Stop ends the store process (its data is gone) and waits for it.
func (p *StoreProcess) Stop() {
	_ = p.stdin.Close()
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// startChild re-executes the running test binary, running no test or
// benchmark, with env (NAME=value) added to its environment and its stderr
// shared: the binary's TestMain serves whatever env asks for, reading stdin
// and reporting on stdout.
func startChild(env string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, stdout, nil
}
