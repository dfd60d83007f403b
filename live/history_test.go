package live_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/live"
)

// oldCursor is a cursor as this server made them before they were
// encrypted: base64url("ev1:" + project + "|" + seq), which anyone could
// write for any sequence.
func oldCursor(project string, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("ev1:" + project + "|" + strconv.FormatUint(seq, 10)))
}

// at is an event made at a given time.
func at(p *domain.Project, kind domain.EventKind, subject string, when time.Time) *domain.Event {
	ev := event(p, kind, subject)
	ev.At = when
	return ev
}

func TestForgedCursorsAreRefusedAlikeBeforeAnyRead(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	in := newInstance(t, e.Store, "", live.HubConfig{})
	web, app := seed.Project("Website relaunch"), seed.Project("Mobile app")
	s := subscribe(t, in.hub, "alice", web, nil)
	for i := range 3 {
		mustPublish(t, in.b, event(web, domain.EventTaskUpdated, fmt.Sprint(i)))
	}
	mustPublish(t, in.b, event(app, domain.EventTaskUpdated, "x"))
	// All three events received: the hub's check of each (a DynamoDB
	// call) is over before the calls are counted below. (The project app
	// has no subscriber here: its event costs no read.)
	d1, d2 := next(t, s), next(t, s)
	next(t, s)
	good := d2.Cursor
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	tampered := append([]byte{}, raw...)
	tampered[len(tampered)/2] ^= 0x01
	otherKey, err := cursor.New(bytes.Repeat([]byte{9}, cursor.MinKey))
	if err != nil {
		t.Fatal(err)
	}
	_, want := in.hub.Subscribe(context.Background(), "alice", web.ID, ptr("not-a-cursor"), newQueue(0))
	if domain.ErrorCode(want) != domain.EINVALID {
		t.Fatalf("a malformed cursor: %v, want EINVALID", want)
	}
	for name, c := range map[string]string{
		"the old format, seq 1":              oldCursor(web.ID, 1),
		"the old format, beyond the end":     oldCursor(web.ID, 1<<40),
		"hand-made bytes":                    base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{1}, len(raw))),
		"tampered":                           base64.RawURLEncoding.EncodeToString(tampered),
		"another key's":                      otherKey.Cursor(web.ID, d1.Seq),
		"another key's, beyond the end":      otherKey.Cursor(web.ID, 1<<40),
		"another project's":                  in.hub.Cursors().Cursor(app.ID, d1.Seq),
		"another project's, from its stream": in.hub.Cursors().Cursor(app.ID, d2.Seq+2),
	} {
		t.Run(name, func(t *testing.T) {
			e.Calls.Reset()
			sub, err := in.hub.Subscribe(context.Background(), "alice", web.ID, &c, newQueue(0))
			if sub != nil || domain.ErrorCode(err) != domain.EINVALID || err.Error() != want.Error() {
				t.Errorf("got %v, %v; want EINVALID %q, as a malformed cursor", sub, err, want)
			}
			if n := e.Calls.Total(); n != 0 {
				t.Errorf("%d DynamoDB calls; the cursor must be refused before anything is read", n)
			}
		})
	}
	if got := in.hub.Subscribers(web.ID); got != 1 {
		t.Errorf("%d subscribers of the project, want alice's alone", got)
	}
	// The genuine cursor still works, and resumes after its event.
	r := subscribe(t, in.hub, "alice", web, &good)
	if d := next(t, r); d.Seq != d2.Seq+1 || d.Cursor == good {
		t.Errorf("resumed at %d (%s), want %d", d.Seq, d.Cursor, d2.Seq+1)
	}
}

func TestCursorsOfOneProjectRevealNoGaps(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	in := newInstance(t, e.Store, "", live.HubConfig{})
	web, app := seed.Project("Website relaunch"), seed.Project("Mobile app")
	s := subscribe(t, in.hub, "alice", web, nil)
	for i := range 20 {
		mustPublish(t, in.b, event(web, domain.EventTaskUpdated, fmt.Sprint(i)))
		for range i % 4 { // other projects' events in between: gaps in the stream's sequences
			mustPublish(t, in.b, event(app, domain.EventTaskUpdated, fmt.Sprint(i)))
		}
	}
	for i := range 20 {
		d := next(t, s)
		if len(d.Cursor) != 50 {
			t.Fatalf("cursor %d has %d characters, want 50 for every event", i, len(d.Cursor))
		}
		raw, err := base64.RawURLEncoding.DecodeString(d.Cursor)
		if err != nil {
			t.Fatalf("cursor %q: %v", d.Cursor, err)
		}
		if bytes.Contains(raw, []byte(web.ID)) || bytes.Contains(raw, []byte("ev1:")) ||
			strings.Contains(string(raw), "|"+strconv.FormatUint(d.Seq, 10)) {
			t.Fatalf("cursor %d decodes to %q: it shows its project or sequence", i, raw)
		}
		var be [8]byte
		for j := range 8 {
			be[7-j] = byte(d.Seq >> (8 * j))
		}
		if bytes.Contains(raw, be[:]) {
			t.Fatalf("cursor %d holds its sequence %d in binary", i, d.Seq)
		}
		if again := in.hub.Cursors().Cursor(web.ID, d.Seq); again != d.Cursor {
			t.Fatalf("the cursor of one event changes: %q, %q", d.Cursor, again)
		}
	}
}

// A replay delivers nothing from before the viewer's membership began
// (seed: every membership began at testenv.Now), starting with the
// viewer's own MEMBER_ADDED; and nothing between their own removal and
// re-adding within the replay.
func TestAReplayStartsNoEarlierThanTheMembership(t *testing.T) {
	e := testenv.New(t)
	seed := e.MustSeed(t)
	in := newInstance(t, e.Store, "", live.HubConfig{})
	web := seed.Project("Website relaunch")
	alice := subscribe(t, in.hub, "alice", web, nil)
	now := testenv.Now
	evs := []*domain.Event{
		at(web, domain.EventTaskCreated, "tsk#secret", now.Add(-3*time.Hour)), // before bob joined
		at(web, domain.EventCommentDeleted, "cmt#said", now.Add(-2*time.Hour)),
		at(web, domain.EventProjectUpdated, web.ID, now.Add(-time.Nanosecond)),
		at(web, domain.EventMemberAdded, "bob", now), // 3: bob's membership, the first he may replay
		at(web, domain.EventTaskUpdated, "tsk#1", now.Add(time.Minute)),
		at(web, domain.EventMemberRemoved, "bob", now.Add(2*time.Minute)), // 5: removed …
		at(web, domain.EventCommentAdded, "cmt#while-out", now.Add(3*time.Minute)),
		at(web, domain.EventTaskDeleted, "tsk#while-out", now.Add(4*time.Minute)),
		at(web, domain.EventMemberAdded, "bob", now.Add(5*time.Minute)), // 8: … and added back
		at(web, domain.EventTaskUpdated, "tsk#2", now.Add(6*time.Minute)),
	}
	var seen []*live.Delivery
	for _, ev := range evs {
		mustPublish(t, in.b, ev)
		seen = append(seen, next(t, alice))
	}
	bob := subscribe(t, in.hub, "bob", web, &seen[0].Cursor)
	marker := at(web, domain.EventProjectUpdated, web.ID, now.Add(time.Hour))
	mustPublish(t, in.b, marker)
	var got []int
	for {
		d := next(t, bob)
		if d.Event.ID == marker.ID {
			break
		}
		for i, s := range seen {
			if s.Seq == d.Seq {
				got = append(got, i)
			}
		}
	}
	if want := []int{3, 4, 5, 8, 9}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bob replayed events %v, want %v: from his MEMBER_ADDED on, nothing while he was out", got, want)
	}
}

func TestAMembershipWithoutItsStartCountsFromTheProjectsCreation(t *testing.T) {
	e := testenv.New(t)
	now := testenv.Now
	b := e.Store.NewDataset(now)
	alice, bob := b.User("alice", "Alice Example", ""), b.User("bob", "Bob Builder", "")
	p := b.Project("Imported", "", alice, bob)
	b.D.Members[1].JoinedAt = time.Time{} // as a hand-made import could hold it: no start
	e.MustImport(t, &b.D)
	in := newInstance(t, e.Store, "", live.HubConfig{})
	first := subscribe(t, in.hub, "alice", p, nil)
	evs := []*domain.Event{
		at(p, domain.EventTaskCreated, "tsk#cursor", now.Add(-2*time.Hour)), // bob resumes after this one
		at(p, domain.EventTaskCreated, "tsk#a", now.Add(-time.Hour)),        // before the project was created
		at(p, domain.EventTaskUpdated, "tsk#b", now),
		at(p, domain.EventTaskUpdated, "tsk#c", now.Add(time.Minute)),
	}
	var seen []*live.Delivery
	for _, ev := range evs {
		mustPublish(t, in.b, ev)
		seen = append(seen, next(t, first))
	}
	r := subscribe(t, in.hub, "bob", p, &seen[0].Cursor)
	marker := at(p, domain.EventProjectUpdated, p.ID, now.Add(time.Hour))
	mustPublish(t, in.b, marker)
	var got []string
	for d := next(t, r); d.Event.ID != marker.ID; d = next(t, r) {
		got = append(got, d.Event.SubjectID)
	}
	if fmt.Sprint(got) != "[tsk#b tsk#c]" {
		t.Errorf("bob replayed %v, want [tsk#b tsk#c]: the events since the project's creation", got)
	}
}

func ptr[T any](v T) *T { return &v }
