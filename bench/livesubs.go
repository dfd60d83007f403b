package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SubscribersEnv is the environment variable that turns a process started
// by StartSubscribers into the subscribers: ServeSubscribersIfAsked sees it.
const SubscribersEnv = "TASKGRAPH_BENCH_SUBSCRIBERS"

// SubscribersSpec is what the subscribers' process opens: N graphql-ws
// connections to URL, each with one subscription to Query with Vars, as
// Token's viewer. With ProjectIDs, subscriber i's Vars have "p" set to
// ProjectIDs[i % len(ProjectIDs)] (the subscribers spread over the projects).
type SubscribersSpec struct {
	URL, Token, Query string
	Vars              map[string]any
	ProjectIDs        []string
	N                 int
	// Profile, when set, is where the subscribers' process writes its CPU
	// profile (from "ready" until it ends).
	Profile string `json:",omitempty"`
}

// varsOf returns subscriber i's variables.
func (s SubscribersSpec) varsOf(i int) map[string]any {
	if len(s.ProjectIDs) == 0 {
		return s.Vars
	}
	v := map[string]any{}
	for k, x := range s.Vars {
		v[k] = x
	}
	v["p"] = s.ProjectIDs[i%len(s.ProjectIDs)]
	return v
}

// PerProject returns how many of the spec's subscribers subscribe to
// ProjectIDs[j] (all N for a spec without ProjectIDs).
func (s SubscribersSpec) PerProject(j int) int {
	k := max(len(s.ProjectIDs), 1)
	n := s.N / k
	if j < s.N%k {
		n++
	}
	return n
}

// ServeSubscribersIfAsked runs the subscribers and exits when the process
// was started by StartSubscribers; otherwise it returns at once. Like
// ServeStoreIfAsked, call it first thing in TestMain.
//
// It opens the connections (32 at a time), prints "ready", then answers
// the lines of its stdin: "seen <k> <title>" waits until k subscribers
// have received an event whose task has that title and prints "seen
// <title> <t>", t the Unix time in nanoseconds when the last of them did;
// "count <title>" prints "count <title> <k>", the subscribers that have.
// An event's task title is all it reads of it.
func ServeSubscribersIfAsked() {
	raw := os.Getenv(SubscribersEnv)
	if raw == "" {
		return
	}
	var spec SubscribersSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "bench subscribers:", err)
		os.Exit(1)
	}
	if err := serveSubscribers(spec); err != nil {
		fmt.Fprintln(os.Stderr, "bench subscribers:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func serveSubscribers(spec SubscribersSpec) error {
	ctx := context.Background()
	ts := &titles{seen: map[string]int{}, last: map[string]time.Time{}, waiters: map[string]titleWaiter{}}
	onNext := func(p json.RawMessage) {
		if title, ok := taskTitle(p); ok {
			ts.add(title)
		}
	}
	onEnd := func(err error) {
		ts.ended.Add(1)
		if err == nil {
			err = errors.New("completed")
		}
		ts.err.CompareAndSwap(nil, err.Error())
	}
	subs := make([]*Subscription, spec.N)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for i := range subs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s, err := Subscribe(ctx, spec.URL, spec.Token, spec.Query, spec.varsOf(i), onNext, onEnd)
			if err != nil {
				firstErr.CompareAndSwap(nil, err)
				return
			}
			subs[i] = s
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	if spec.Profile != "" {
		f, err := os.Create(spec.Profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		cmd, title, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "seen":
			ks, t, _ := strings.Cut(title, " ")
			want, err := strconv.Atoi(ks)
			if err != nil {
				return fmt.Errorf("seen %q: %w", title, err)
			}
			title = t
			done := ts.wait(title, want)
		waiting:
			for {
				select {
				case <-done:
					break waiting
				case <-time.After(time.Second): // to look at ended again
				}
				if ts.ended.Load() > 0 {
					return fmt.Errorf("a subscription ended: %v", ts.err.Load())
				}
			}
			fmt.Printf("seen %s %d\n", title, ts.lastOf(title).UnixNano())
		case "count":
			n := ts.count(title)
			fmt.Printf("count %s %d\n", title, n)
		}
	}
	for _, s := range subs {
		s.Close()
	}
	return nil
}

// Subscribers is the subscribers' process.
type Subscribers struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

// StartSubscribers re-executes the running binary as spec's subscribers
// and waits until all are connected and subscribed (their subscription
// queries sent; the server may not have started them yet: Warm waits for
// that). The binary must call ServeSubscribersIfAsked first thing.
func StartSubscribers(ctx context.Context, spec SubscribersSpec) (*Subscribers, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd, stdin, stdout, err := startChild(SubscribersEnv + "=" + string(b))
	if err != nil {
		return nil, err
	}
	return readySubscribers(ctx, cmd, stdin, stdout)
}

// StartNodeSubscribers starts spec's subscribers with an npm client
// (client: "graphql-ws" or "graphql-sse"): node runs script
// (bench/subscribers.mjs, the same line protocol as
// ServeSubscribersIfAsked) with nodeModules on its NODE_PATH. It waits
// until all are connected and subscribed.
func StartNodeSubscribers(ctx context.Context, spec SubscribersSpec, client, script, nodeModules string) (*Subscribers, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", script)
	cmd.Env = append(os.Environ(), SubscribersEnv+"="+string(b), "TASKGRAPH_BENCH_CLIENT="+client, "NODE_PATH="+nodeModules)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return readySubscribers(ctx, cmd, stdin, stdout)
}

// readySubscribers reads the started subscribers' lines and waits for
// their "ready".
func readySubscribers(ctx context.Context, cmd *exec.Cmd, stdin io.WriteCloser, stdout io.Reader) (*Subscribers, error) {
	s := &Subscribers{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	if _, err := s.expect(ctx, "ready"); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Subscribers) expect(ctx context.Context, prefix string) (string, error) {
	select {
	case l, ok := <-s.lines:
		if !ok {
			return "", errors.New("the subscribers' process ended (see its stderr)")
		}
		if !strings.HasPrefix(l, prefix) {
			return "", fmt.Errorf("the subscribers' process said %q, want %q", l, prefix)
		}
		return l, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// WaitSeen waits until k subscribers have received the event of the
// change that gave a task this title, and returns when the last of them
// did (by the subscribers' clock, this machine's).
func (s *Subscribers) WaitSeen(ctx context.Context, k int, title string) (time.Time, error) {
	if _, err := fmt.Fprintf(s.stdin, "seen %d %s\n", k, title); err != nil {
		return time.Time{}, err
	}
	l, err := s.expect(ctx, "seen "+title+" ")
	if err != nil {
		return time.Time{}, err
	}
	ns, err := strconv.ParseInt(l[strings.LastIndexByte(l, ' ')+1:], 10, 64)
	return time.Unix(0, ns), err
}

// Count returns how many subscribers have received the event of the change
// that gave a task this title.
func (s *Subscribers) Count(ctx context.Context, title string) (int, error) {
	if _, err := fmt.Fprintf(s.stdin, "count %s\n", title); err != nil {
		return 0, err
	}
	l, err := s.expect(ctx, "count "+title+" ")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(l[strings.LastIndexByte(l, ' ')+1:])
}

// Warm makes changes with change(j, title), one in each of the spec's
// projects j, until every subscriber has received one: then all
// subscriptions run, and every later change reaches all of its project's.
// It returns the number of rounds of changes it made.
func (s *Subscribers) Warm(ctx context.Context, spec SubscribersSpec, change func(j int, title string) error) (int, error) {
	k := max(len(spec.ProjectIDs), 1)
	for i := 1; i <= 50; i++ {
		done := 0
		for j := range k {
			title := fmt.Sprintf("warm-up %d, project %d", i, j)
			if err := change(j, title); err != nil {
				return i, err
			}
			for range 20 {
				n, err := s.Count(ctx, title)
				if err != nil {
					return i, err
				}
				if n == spec.PerProject(j) {
					done++
					break
				}
				time.Sleep(100 * time.Millisecond) // a benchmark's pace, not a test's assertion
			}
		}
		if done == k {
			return i, nil
		}
	}
	return 50, errors.New("the subscribers never all received a change")
}

// RSS returns the resident memory of a node subscribers' process
// (StartNodeSubscribers), as it reports it.
func (s *Subscribers) RSS(ctx context.Context) (int64, error) {
	if _, err := fmt.Fprintln(s.stdin, "rss"); err != nil {
		return 0, err
	}
	l, err := s.expect(ctx, "rss ")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimPrefix(l, "rss "), 10, 64)
}

// CPU returns the subscribers' process's CPU time so far.
func (s *Subscribers) CPU() (time.Duration, bool) { return processCPU(s.cmd.Process.Pid) }

// Stop ends the subscribers' process.
func (s *Subscribers) Stop() {
	_ = s.stdin.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}
