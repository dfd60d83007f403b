// Package cluster_test proves a real cluster: scripts/cluster's three NATS
// JetStream nodes (the stream in 3 replicas) and three taskgraph instances
// on one DynamoDB Local table, under a steady write load with a subscriber
// on every instance, losing the stream's leader node and an instance to
// SIGKILL and getting them back.
package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// answered is a write an instance answered: its task, and when.
type answered struct {
	ID string
	At time.Time
}

// writers create tasks in a project through the instances in turn, one
// every 20 ms per writer, keeping what was answered.
type writers struct {
	urls           []string
	token, project string
	mu             sync.Mutex
	ok             []answered
	failed         int
}

func (w *writers) run(ctx context.Context, id int) {
	for i := 0; ctx.Err() == nil; i++ {
		var out struct{ CreateTask struct{ ID string } }
		err := post(w.urls[(id+i)%len(w.urls)], w.token, `mutation($p: ID!, $t: String!) { createTask(input: {projectId: $p, title: $t}) { id } }`,
			map[string]any{"p": w.project, "t": fmt.Sprintf("writer %d, task %d", id, i)}, &out)
		w.mu.Lock()
		if err == nil {
			w.ok = append(w.ok, answered{out.CreateTask.ID, time.Now()})
		} else {
			w.failed++
		}
		w.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAClusterLosesNothingWhenItsStreamLeaderAndAnInstanceAreKilled(t *testing.T) {
	ddb := testenv.Endpoint(t, testenv.DynamoDBLocal)
	t0 := time.Now()
	c := startCluster(t, ddb)
	t.Logf("cluster up in %s", time.Since(t0).Round(time.Millisecond))
	tok, err := (&auth.Authenticator{Secret: []byte(c.secret)}).Sign("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ CreateProject struct{ ID string } }
	if err := post(c.urls[0], tok, `mutation { updateProfile(input: {name: "Alice"}) { id } }`, nil, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	if err := post(c.urls[1], tok, `mutation { createProject(input: {name: "Under load"}) { id } }`, nil, &p); err != nil {
		t.Fatal(err)
	}
	project := p.CreateProject.ID

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	subs := make([]*subscriber, 3)
	for i := range subs {
		subs[i] = &subscriber{urls: c.urls, token: tok, project: project}
		wg.Go(func() { subs[i].run(ctx, i) }) // one on each instance
	}
	w := &writers{urls: c.urls, token: tok, project: project}
	waitForSubscribers(t, w, subs)
	wctx, stopWriting := context.WithCancel(ctx)
	var ww sync.WaitGroup
	for i := range 2 {
		ww.Go(func() { w.run(wctx, i) })
	}
	time.Sleep(2 * time.Second)
	leader := c.streamLeader(t)
	killedAt := time.Now()
	c.kill(t, leader)
	c.kill(t, "taskgraph-2")
	t.Logf("killed %s (the stream's leader) and taskgraph-2", leader)
	time.Sleep(2 * time.Second) // the survivors serve meanwhile
	restart := time.Now()
	c.mustScript(t, "start") // the two come back; it returns once every instance is ready
	restarted := time.Since(restart)
	time.Sleep(2 * time.Second)
	stopWriting()
	ww.Wait()

	stream := waitForDelivery(t, c, project, w, subs)
	checkTable(t, c, tok, project, w.ok)
	report(t, killedAt, restarted, w, subs, stream)
}

// waitForSubscribers writes marker tasks until every subscriber got one:
// from then on, each gets every event.
func waitForSubscribers(t *testing.T, w *writers, subs []*subscriber) {
	t.Helper()
	for deadline, i := time.Now().Add(60*time.Second), 0; ; i++ {
		all := true
		for _, s := range subs {
			all = all && len(s.events()) > 0
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the subscribers got no event in 60 s")
		}
		var out struct{ CreateTask struct{ ID string } }
		if err := post(w.urls[i%len(w.urls)], w.token, `mutation($p: ID!, $t: String!) { createTask(input: {projectId: $p, title: $t}) { id } }`,
			map[string]any{"p": w.project, "t": fmt.Sprint("marker ", i)}, &out); err == nil {
			w.ok = append(w.ok, answered{out.CreateTask.ID, time.Now()})
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitForDelivery waits until the stream holds the event of every answered
// write and every subscriber has every event from its first one to the
// stream's last, then checks that each got them exactly once, in the
// stream's order, and returns the stream.
func waitForDelivery(t *testing.T, c *cluster, project string, w *writers, subs []*subscriber) []streamEvent {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		stream, err := c.projectStream(t, project)
		if err != nil { // the cluster still settling after the restart: read again
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(250 * time.Millisecond)
			continue
		}
		missing := missingEvents(stream, w.ok)
		behind := -1
		for i, s := range subs {
			if got := s.events(); len(got) == 0 || len(got) < len(stream)-indexOf(stream, got[0].SubjectID) {
				behind = i
			}
		}
		if len(missing) == 0 && behind < 0 {
			for i, s := range subs {
				checkSubscriber(t, i, s.events(), stream)
			}
			return stream
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 90 s: %d answered writes have no event in the stream (%v); subscriber %d is behind", len(missing), missing[:min(3, len(missing))], behind)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func missingEvents(stream []streamEvent, ok []answered) []string {
	in := map[string]bool{}
	for _, ev := range stream {
		in[ev.SubjectID] = true
	}
	var missing []string
	for _, a := range ok {
		if !in[a.ID] {
			missing = append(missing, a.ID)
		}
	}
	return missing
}

func indexOf(stream []streamEvent, subject string) int {
	return slices.IndexFunc(stream, func(ev streamEvent) bool { return ev.SubjectID == subject })
}

// checkSubscriber: the subscriber's events are the stream's from its first
// one on, each once, in order (the stream itself holding each event once).
func checkSubscriber(t *testing.T, i int, got []received, stream []streamEvent) {
	t.Helper()
	ids := map[string]bool{}
	for _, ev := range stream {
		if ids[ev.ID] || ev.Kind != "TASK_CREATED" {
			t.Fatalf("the stream holds event %s (%s of %s) twice, or an event no write made", ev.ID, ev.Kind, ev.SubjectID)
		}
		ids[ev.ID] = true
	}
	j := indexOf(stream, got[0].SubjectID)
	if j < 0 {
		t.Fatalf("subscriber %d's first event (%s) is not in the stream", i, got[0].SubjectID)
	}
	for k := range got {
		if j+k >= len(stream) {
			break // arrived after the stream was read
		}
		if got[k].SubjectID != stream[j+k].SubjectID || got[k].Kind != stream[j+k].Kind {
			t.Fatalf("subscriber %d's event %d is %s of %s, the stream's (seq %d) is %s of %s: an event lost, repeated or out of order",
				i, k, got[k].Kind, got[k].SubjectID, stream[j+k].Seq, stream[j+k].Kind, stream[j+k].SubjectID)
		}
	}
}

// checkTable reads the project's tasks from the table (through an
// instance, page by page): every answered write is there.
func checkTable(t *testing.T, c *cluster, tok, project string, ok []answered) {
	t.Helper()
	have := map[string]bool{}
	var after *string
	for {
		var d struct {
			Project struct {
				Tasks struct {
					Nodes    []struct{ ID string }
					PageInfo struct {
						HasNextPage bool
						EndCursor   string
					}
				}
			}
		}
		if err := post(c.urls[2], tok, `query($p: ID!, $a: String) { project(id: $p) { tasks(first: 100, after: $a) { nodes { id } pageInfo { hasNextPage endCursor } } } }`,
			map[string]any{"p": project, "a": after}, &d); err != nil {
			t.Fatal(err)
		}
		for _, n := range d.Project.Tasks.Nodes {
			have[n.ID] = true
		}
		if !d.Project.Tasks.PageInfo.HasNextPage {
			break
		}
		after = &d.Project.Tasks.PageInfo.EndCursor
	}
	for _, a := range ok {
		if !have[a.ID] {
			t.Fatalf("answered write %s (at %s) is not in the table", a.ID, a.At.Format(time.StampMilli))
		}
	}
}

// report logs the figures of docs/scaling.md: how late events were after
// the kill, when they were on time again, how long the restart took.
func report(t *testing.T, killedAt time.Time, restarted time.Duration, w *writers, subs []*subscriber, stream []streamEvent) {
	delivered := map[string]time.Time{} // the last subscriber's receipt
	for _, s := range subs {
		for _, r := range s.events() {
			if r.At.After(delivered[r.SubjectID]) {
				delivered[r.SubjectID] = r.At
			}
		}
	}
	var maxDelay, onTime time.Duration
	for _, a := range w.ok {
		if a.At.Before(killedAt) {
			continue
		}
		d := delivered[a.ID].Sub(a.At)
		maxDelay = max(maxDelay, d)
		if d >= time.Second {
			onTime = max(onTime, delivered[a.ID].Sub(killedAt))
		}
	}
	resumed := 0
	for _, s := range subs {
		s.mu.Lock()
		resumed += s.sessions - 1
		s.mu.Unlock()
	}
	t.Logf("%d writes answered (%d refused or lost with the killed instance), %d events in the stream, %d resumptions by the 3 subscribers",
		len(w.ok), w.failed, len(stream), resumed)
	t.Logf("RECOVERY: events of writes answered after the kill reached every subscriber at most %s late; every event under 1 s late again %s after the kill; the killed node and instance ready again %s after their restart",
		maxDelay.Round(10*time.Millisecond), onTime.Round(10*time.Millisecond), restarted.Round(10*time.Millisecond))
}
