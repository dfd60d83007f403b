package bench

import (
	"bytes"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// titles records, per title, how many subscribers have seen it and when
// the latest did, and wakes the one waiter of a title once its count is
// reached (not at each arrival: thousands of wake-ups an event would be
// the subscribers' cost, on the cores the servers measured share).
type titles struct {
	mu      sync.Mutex
	seen    map[string]int
	last    map[string]time.Time // when the title's latest arrival was
	waiters map[string]titleWaiter
	ended   atomic.Int64
	err     atomic.Value // the first subscription's end (string)
}

type titleWaiter struct {
	want int
	done chan struct{}
}

func (t *titles) add(title string) {
	now := time.Now()
	t.mu.Lock()
	t.seen[title]++
	t.last[title] = now
	if w, ok := t.waiters[title]; ok && t.seen[title] >= w.want {
		close(w.done)
		delete(t.waiters, title)
	}
	t.mu.Unlock()
}

// wait returns a channel closed once want subscribers have seen title.
func (t *titles) wait(title string, want int) chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	done := make(chan struct{})
	if t.seen[title] >= want {
		close(done)
		return done
	}
	t.waiters[title] = titleWaiter{want: want, done: done}
	return done
}

func (t *titles) count(title string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seen[title]
}

func (t *titles) lastOf(title string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last[title]
}

// taskTitle returns the title of an event's task: the string after the
// payload's first "title" key when it has no escapes (the bench's titles),
// else as JSON decodes it. Thousands of subscribers in one process on the
// servers' cores: a decoding of each event by reflection was a third of
// their CPU, and the latency measured waited for it.
func taskTitle(p []byte) (string, bool) {
	const key = `"title":"`
	if i := bytes.Index(p, []byte(key)); i >= 0 {
		rest := p[i+len(key):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 && bytes.IndexByte(rest[:j], '\\') < 0 {
			return string(rest[:j]), true
		}
	}
	var ev struct {
		Data struct {
			ProjectEvents struct {
				Task *struct{ Title string }
			}
		}
	}
	if json.Unmarshal(p, &ev) != nil || ev.Data.ProjectEvents.Task == nil {
		return "", false
	}
	return ev.Data.ProjectEvents.Task.Title, true
}
