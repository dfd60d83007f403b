package graph_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// tickingClock makes the Env's store clock advance a millisecond at each
// reading, so that each change has a time of its own (the Env's clock
// otherwise stands still, and every change would share one time). Call it
// before anything runs on the store.
func tickingClock(e *testenv.Env) {
	var n atomic.Int64
	e.Store.Now = func() time.Time { return testenv.Now.Add(time.Duration(n.Add(1)) * time.Millisecond) }
}

func mustNextSSE(t *testing.T, ch <-chan testenv.SSEEvent) testenv.SSEEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the event stream ended")
		}
		return ev
	case <-time.After(testTimeout):
		t.Fatal("no server-sent event within the timeout")
	}
	return testenv.SSEEvent{}
}

// sseEventData decodes a "next" server-sent event as a project event.
func sseEventData(t *testing.T, ev testenv.SSEEvent) eventData {
	t.Helper()
	if ev.Type != "next" {
		t.Fatalf("got the server-sent event %s %s, want next", ev.Type, ev.Data)
	}
	var n testenv.Next
	if err := json.Unmarshal([]byte(ev.Data), &n); err != nil {
		t.Fatalf("decoding %s: %v", ev.Data, err)
	}
	return decodeEvent(t, n)
}

// seen is an event as a member saw it live: what the others' replays are
// compared with.
type seen struct{ Kind, SubjectID, Cursor string }

func (s seen) String() string { return s.Kind + " " + s.SubjectID }

func seenOf(d eventData) seen {
	return seen{d.ProjectEvents.Kind, d.ProjectEvents.SubjectID, d.ProjectEvents.Cursor}
}

// readWSUntil reads a WebSocket subscription's events up to the one whose
// cursor is last.
func readWSUntil(t *testing.T, c *testenv.WSClient, id, last string) []seen {
	t.Helper()
	var got []seen
	for {
		s := seenOf(decodeEvent(t, c.MustNext(t, id)))
		got = append(got, s)
		if s.Cursor == last || len(got) > 50 {
			return got
		}
	}
}

// readSSEUntil is readWSUntil over server-sent events.
func readSSEUntil(t *testing.T, ch <-chan testenv.SSEEvent, last string) []seen {
	t.Helper()
	var got []seen
	for {
		s := seenOf(sseEventData(t, mustNextSSE(t, ch)))
		got = append(got, s)
		if s.Cursor == last || len(got) > 50 {
			return got
		}
	}
}

func sameEvents(got, want []seen) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// oldCursor is a cursor as this server made them before they were
// encrypted: base64url("ev1:" + project + "|" + seq).
func oldCursor(project string, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("ev1:" + project + "|" + strconv.FormatUint(seq, 10)))
}

func TestAForgedCursorIsRefusedOverWebSocketAndSSEAndDeliversNothing(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web, app := seed.Project("Website relaunch"), seed.Project("Mobile app")
	alice := e.MustDialWS(t, srv, "alice")
	alice.Subscribe(t, "a", taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)
	task := seed.Task("Write the landing page copy")
	mustUpdateTask(t, e, "alice", task.ID, `title: "one"`)
	mustUpdateTask(t, e, "alice", task.ID, `title: "two"`)
	first := decodeEvent(t, alice.MustNext(t, "a")).ProjectEvents.Cursor
	raw, _ := base64.RawURLEncoding.DecodeString(first)
	tampered := append([]byte{}, raw...)
	tampered[len(tampered)-1] ^= 0x80
	cases := map[string]string{
		"the old format, seq 1": oldCursor(web.ID, 1),
		"hand-made bytes":       base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{0x42}, len(raw))),
		"tampered":              base64.RawURLEncoding.EncodeToString(tampered),
		"another project's":     lv.Hub.Cursors().Cursor(app.ID, 1),
		"malformed":             "bm90IGEgY3Vyc29y",
	}
	var messages []string
	for name, cursor := range cases {
		t.Run(name+" over WebSocket", func(t *testing.T) {
			c := e.MustDialWS(t, srv, "carol")
			c.Subscribe(t, "1", taskEventsSub, map[string]any{"p": web.ID, "after": cursor})
			messages = append(messages, mustEndWith(t, c, "1", "BAD_USER_INPUT").Message)
		})
		t.Run(name+" over SSE", func(t *testing.T) {
			res := testenv.MustOpenSSE(t, srv, "Bearer "+e.Token(t, "carol"), taskEventsSub, map[string]any{"p": web.ID, "after": cursor})
			ch := testenv.ReadSSE(res.Body)
			ev := mustNextSSE(t, ch)
			var n testenv.Next
			if err := json.Unmarshal([]byte(ev.Data), &n); err != nil || ev.Type != "next" || len(n.Errors) != 1 ||
				n.Errors[0].Code() != "BAD_USER_INPUT" || !testenv.NullData(n.Data) {
				t.Fatalf("got %s %s, want data null and one BAD_USER_INPUT", ev.Type, ev.Data)
			}
			messages = append(messages, n.Errors[0].Message)
			if ev := mustNextSSE(t, ch); ev.Type != "complete" {
				t.Errorf("then %s %s, want complete", ev.Type, ev.Data)
			}
		})
	}
	for _, m := range messages {
		if m != messages[0] {
			t.Errorf("messages differ: %q and %q; every cursor the server did not make must read alike", m, messages[0])
		}
	}
	if got := lv.Hub.Subscribers(web.ID); got != 1 {
		t.Errorf("%d subscribers of the project, want alice's alone", got)
	}
}

func TestAMemberAddedAfterActivityReplaysNothingFromBeforeTheyJoined(t *testing.T) {
	e := testenv.New(t)
	tickingClock(e)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	alice := e.MustDialWS(t, srv, "alice")
	alice.Subscribe(t, "a", taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)

	// Before eve joins: a task created and deleted, a comment deleted, a
	// description overwritten.
	var created struct{ CreateTask struct{ ID string } }
	e.MustQuery(t, "alice", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "The secret plan"}) { id } }`,
		map[string]any{"p": web.ID}, &created)
	var comment struct{ AddComment struct{ ID string } }
	e.MustQuery(t, "alice", `mutation($t: ID!) { addComment(input: {taskId: $t, body: "said before eve joined"}) { id } }`,
		map[string]any{"t": seed.Task("Write the landing page copy").ID}, &comment)
	e.MustQuery(t, "alice", `mutation($c: ID!) { deleteComment(id: $c) }`, map[string]any{"c": comment.AddComment.ID}, nil)
	e.MustQuery(t, "alice", `mutation($p: ID!) { updateProject(input: {id: $p, description: "what eve must not read"}) { id } }`,
		map[string]any{"p": web.ID}, nil)
	e.MustQuery(t, "alice", `mutation($p: ID!) { updateProject(input: {id: $p, description: "what eve may read"}) { id } }`,
		map[string]any{"p": web.ID}, nil)
	e.MustQuery(t, "alice", `mutation($t: ID!) { deleteTask(id: $t) }`, map[string]any{"t": created.CreateTask.ID}, nil)
	// eve joins; then one more change.
	e.MustQuery(t, "alice", `mutation($p: ID!) { addProjectMember(projectId: $p, userId: "eve") { id } }`, map[string]any{"p": web.ID}, nil)
	task := seed.Task("Fix the broken signup form")
	mustUpdateTask(t, e, "alice", task.ID, `status: DONE`)

	var all []seen
	for range 8 {
		all = append(all, seenOf(decodeEvent(t, alice.MustNext(t, "a"))))
	}
	if all[6].Kind != "MEMBER_ADDED" || all[6].SubjectID != "eve" {
		t.Fatalf("alice saw %v; want eve's MEMBER_ADDED seventh", all)
	}
	mark := func(t *testing.T) seen { // a change after the replay: what ends each read
		mustUpdateTask(t, e, "alice", task.ID, `title: "marker `+fmt.Sprint(len(all))+`"`)
		all = append(all, seenOf(decodeEvent(t, alice.MustNext(t, "a"))))
		return all[len(all)-1]
	}

	t.Run("over WebSocket", func(t *testing.T) {
		c := e.MustDialWS(t, srv, "eve")
		c.Subscribe(t, "e", taskEventsSub, map[string]any{"p": web.ID, "after": all[0].Cursor}) // legitimately alice's
		m := mark(t)
		if got, want := readWSUntil(t, c, "e", m.Cursor), append(all[6:8:8], m); !sameEvents(got, want) {
			t.Errorf("eve replayed %v, want %v: from her MEMBER_ADDED on", got, want)
		}
	})
	t.Run("over SSE", func(t *testing.T) {
		res := testenv.MustOpenSSE(t, srv, "Bearer "+e.Token(t, "eve"), taskEventsSub, map[string]any{"p": web.ID, "after": all[0].Cursor})
		ch := testenv.ReadSSE(res.Body)
		m := mark(t)
		want := append(append([]seen{}, all[6:8]...), all[8:]...)
		if got := readSSEUntil(t, ch, m.Cursor); !sameEvents(got, want) {
			t.Errorf("eve replayed %v, want %v: from her MEMBER_ADDED on", got, want)
		}
	})
}

func TestAMemberRemovedAndAddedBackReplaysNothingFromWhileTheyWereOut(t *testing.T) {
	e := testenv.New(t)
	tickingClock(e)
	seed := e.MustSeed(t)
	lv, srv := e.StartLive(t, pipeline.Options{}, live.HubConfig{})
	web := seed.Project("Website relaunch")
	task := seed.Task("Write the landing page copy")
	alice := e.MustDialWS(t, srv, "alice")
	alice.Subscribe(t, "a", taskEventsSub, map[string]any{"p": web.ID})
	bob := e.MustDialWS(t, srv, "bob")
	bob.Subscribe(t, "b", taskEventsSub, map[string]any{"p": web.ID})
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 2)
	mustUpdateTask(t, e, "alice", task.ID, `title: "seen by bob"`)
	old := seenOf(decodeEvent(t, bob.MustNext(t, "b"))).Cursor // bob's last cursor
	_ = bob.Conn.CloseNow()
	testenv.WaitSubscribers(t, lv.Hub, web.ID, 1)

	mustUpdateTask(t, e, "alice", task.ID, `title: "while bob was away, still a member"`)
	e.MustQuery(t, "alice", `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "bob") { id } }`, map[string]any{"p": web.ID}, nil)
	e.MustQuery(t, "alice", `mutation($t: ID!) { addComment(input: {taskId: $t, body: "said while bob was out"}) { id } }`,
		map[string]any{"t": task.ID}, nil)
	e.MustQuery(t, "alice", `mutation($p: ID!) { updateProject(input: {id: $p, description: "written while bob was out"}) { id } }`,
		map[string]any{"p": web.ID}, nil)
	e.MustQuery(t, "alice", `mutation($p: ID!) { addProjectMember(projectId: $p, userId: "bob") { id } }`, map[string]any{"p": web.ID}, nil)
	mustUpdateTask(t, e, "alice", task.ID, `title: "after bob was back"`)
	var all []seen
	for range 7 {
		all = append(all, seenOf(decodeEvent(t, alice.MustNext(t, "a"))))
	}
	if all[0].Cursor != old || all[2].Kind != "MEMBER_REMOVED" || all[5].Kind != "MEMBER_ADDED" || all[5].SubjectID != "bob" {
		t.Fatalf("alice saw %v", all)
	}
	mark := func(t *testing.T) seen {
		mustUpdateTask(t, e, "alice", task.ID, `title: "marker `+fmt.Sprint(len(all))+`"`)
		all = append(all, seenOf(decodeEvent(t, alice.MustNext(t, "a"))))
		return all[len(all)-1]
	}

	t.Run("over WebSocket", func(t *testing.T) {
		c := e.MustDialWS(t, srv, "bob")
		c.Subscribe(t, "b", taskEventsSub, map[string]any{"p": web.ID, "after": old})
		m := mark(t)
		if got, want := readWSUntil(t, c, "b", m.Cursor), append(all[5:7:7], m); !sameEvents(got, want) {
			t.Errorf("bob replayed %v, want %v: from his being added back on", got, want)
		}
	})
	t.Run("over SSE", func(t *testing.T) {
		res := testenv.MustOpenSSE(t, srv, "Bearer "+e.Token(t, "bob"), taskEventsSub, map[string]any{"p": web.ID, "after": old})
		ch := testenv.ReadSSE(res.Body)
		m := mark(t)
		want := append(append([]seen{}, all[5:7]...), all[7:]...)
		if got := readSSEUntil(t, ch, m.Cursor); !sameEvents(got, want) {
			t.Errorf("bob replayed %v, want %v: from his being added back on", got, want)
		}
	})
}
