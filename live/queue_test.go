package live_test

import (
	"context"
	"io"
	"sync"

	"github.com/taskgraph/taskgraph/live"
)

// The tests' subscriber: what the hub delivers waits in a bounded queue
// until the test reads it (Next), as a transport's backlog would; a full
// queue cuts the subscriber off with ErrSlow.

// queues is the tests' live.Receiver: each recipient's queue takes the event.
type queues struct{}

func (queues) Deliver(d *live.Delivery, to []live.Recipient) {
	for _, r := range to {
		if q, ok := r.Sub.Owner().(*queue); ok && !q.push(d) {
			r.Sub.End(live.ErrSlow)
		}
	}
}

type queue struct {
	buffer int // 0: unbounded
	mu     sync.Mutex
	items  []*live.Delivery
	done   bool
	err    error
	wake   chan struct{} // closed and remade on every change
}

func newQueue(buffer int) *queue { return &queue{buffer: buffer, wake: make(chan struct{})} }

func (q *queue) changed() {
	close(q.wake)
	q.wake = make(chan struct{})
}

// push queues d; false when the queue is full.
func (q *queue) push(d *live.Delivery) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.buffer > 0 && len(q.items) >= q.buffer {
		return false
	}
	q.items = append(q.items, d)
	q.changed()
	return true
}

// Ended records the end; after ErrSlow or a shutdown what was queued is
// dropped, as a cut-off transport drops it.
func (q *queue) Ended(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.done, q.err = true, err
	if err != io.EOF && err != live.ErrGone {
		q.items = nil
	}
	q.changed()
}

// Room waits until the queue has room for one more event.
func (q *queue) Room(ctx context.Context) bool {
	for {
		q.mu.Lock()
		done, full, wake := q.done, q.buffer > 0 && len(q.items) >= q.buffer, q.wake
		q.mu.Unlock()
		switch {
		case done:
			return false
		case !full:
			return true
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}

// testSub is a subscription and its queue.
type testSub struct {
	s *live.Subscription
	q *queue
}

func (t *testSub) Close() { t.s.Close() }

// Next returns the next event, or why the subscription ended.
func (t *testSub) Next(ctx context.Context) (*live.Delivery, error) {
	q := t.q
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			d := q.items[0]
			q.items = q.items[1:]
			q.changed()
			q.mu.Unlock()
			return d, nil
		}
		if q.done {
			err := q.err
			q.mu.Unlock()
			return nil, err
		}
		wake := q.wake
		q.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Queued returns how many events wait in the queue.
func (t *testSub) Queued() int {
	t.q.mu.Lock()
	defer t.q.mu.Unlock()
	return len(t.q.items)
}
