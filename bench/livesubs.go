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
// Token's viewer.
type SubscribersSpec struct {
	URL, Token, Query string
	Vars              map[string]any
	N                 int
}

// ServeSubscribersIfAsked runs the subscribers and exits when the process
// was started by StartSubscribers; otherwise it returns at once. Like
// ServeStoreIfAsked, call it first thing in TestMain.
//
// It opens the connections (32 at a time), prints "ready", then answers
// the lines of its stdin: "seen <title>" waits until every subscriber has
// received an event whose task has that title and prints "seen <title>";
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

// titles records, per title, how many subscribers have seen it, and wakes
// waiters.
type titles struct {
	mu    sync.Mutex
	seen  map[string]int
	wake  chan struct{}
	ended atomic.Int64
	err   atomic.Value // the first subscription's end (string)
}

func (t *titles) add(title string) {
	t.mu.Lock()
	t.seen[title]++
	close(t.wake)
	t.wake = make(chan struct{})
	t.mu.Unlock()
}

func (t *titles) count(title string) (int, chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seen[title], t.wake
}

func serveSubscribers(spec SubscribersSpec) error {
	ctx := context.Background()
	ts := &titles{seen: map[string]int{}, wake: make(chan struct{})}
	onNext := func(p json.RawMessage) {
		var ev struct {
			Data struct {
				ProjectEvents struct {
					Task *struct{ Title string }
				}
			}
		}
		if json.Unmarshal(p, &ev) == nil && ev.Data.ProjectEvents.Task != nil {
			ts.add(ev.Data.ProjectEvents.Task.Title)
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
			s, err := Subscribe(ctx, spec.URL, spec.Token, spec.Query, spec.Vars, onNext, onEnd)
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
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		cmd, title, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "seen":
			for {
				n, wake := ts.count(title)
				if n >= spec.N {
					break
				}
				if ts.ended.Load() > 0 {
					return fmt.Errorf("a subscription ended: %v", ts.err.Load())
				}
				select {
				case <-wake:
				case <-time.After(time.Second): // to look at ended again
				}
			}
			fmt.Println("seen " + title)
		case "count":
			n, _ := ts.count(title)
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

// WaitSeen waits until every subscriber has received the event of the
// change that gave a task this title.
func (s *Subscribers) WaitSeen(ctx context.Context, title string) error {
	if _, err := fmt.Fprintf(s.stdin, "seen %s\n", title); err != nil {
		return err
	}
	_, err := s.expect(ctx, "seen "+title)
	return err
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

// Warm makes changes with change(title) until every subscriber has
// received one: then all subscriptions run, and every later change reaches
// them all. It returns the number of changes it made.
func (s *Subscribers) Warm(ctx context.Context, n int, change func(title string) error) (int, error) {
	for i := 1; i <= 50; i++ {
		title := fmt.Sprintf("warm-up %d", i)
		if err := change(title); err != nil {
			return i, err
		}
		for range 20 {
			k, err := s.Count(ctx, title)
			if err != nil {
				return i, err
			}
			if k == n {
				return i, nil
			}
			time.Sleep(100 * time.Millisecond) // a benchmark's pace, not a test's assertion
		}
	}
	return 50, errors.New("the subscribers never all received a change")
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
