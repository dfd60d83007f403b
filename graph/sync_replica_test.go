package graph_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// A replica is what an offline client keeps: every object its viewer may
// see, by id, as sync last sent it (upserts replace, tombstones drop), and
// the token to go on from. fullRead is what a fresh read of the API shows
// the same viewer, in the same shape, to compare the two.

// The fields a client keeps of each type; references by id (a client
// normalizes them, as Apollo Client's cache does).
const (
	syncProjectFields = `id name description owner { id } createdAt taskCounts { total todo inProgress done } members { role user { id } }`
	syncTaskFields    = `id title description status dueDate tags { name } version commentCount createdAt updatedAt project { id } assignee { id }`
	syncCommentFields = `id body createdAt task { id } author { id }`
	syncUserFields    = `id name email`
)

// syncDoc is the sync query a replica sends.
var syncDoc = `query Sync($since: String, $first: Int) { sync(since: $since, first: $first) { nextToken hasMore
	upserts { __typename ... on Project { ` + syncProjectFields + ` } ... on Task { ` + syncTaskFields + ` }
		... on Comment { ` + syncCommentFields + ` } ... on User { ` + syncUserFields + ` } }
	tombstones { nodeId typename } } }`

// fullDoc reads everything a viewer may see, in the replica's shape.
var fullDoc = `query Full { me { ` + syncUserFields + ` projects(first: 100) { pageInfo { hasNextPage } nodes { ` + syncProjectFields + `
	members { user { ` + syncUserFields + ` } }
	tasks(first: 100) { pageInfo { hasNextPage } nodes { ` + syncTaskFields + `
		comments(first: 100) { pageInfo { hasNextPage } nodes { ` + syncCommentFields + ` } } } } } } } }`

// testClock is a clock a test moves; the store and the handler of a
// syncEnv both read it.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newSyncEnv is an Env whose store and handler read one clock (at
// testenv.Now) that the test moves.
func newSyncEnv(t testing.TB) (*testenv.Env, *testClock) {
	t.Helper()
	e := testenv.New(t)
	c := &testClock{t: testenv.Now}
	e.Store.Now = c.Now
	logs := &testenv.LogBuffer{}
	e.Store.Log = slog.New(slog.NewTextHandler(logs, nil))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the server's log:\n%s", logs.String())
		}
	})
	e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Now: c.Now}})
	return e, c
}

// syncPage is one page as the client reads it.
type syncPage struct {
	NextToken  string
	HasMore    bool
	Upserts    []map[string]any
	Tombstones []struct{ NodeID, Typename string }
}

type replica struct {
	viewer string
	token  *string
	objs   map[string]string // id → the object as JSON, with its __typename
	pages  int
	// trail is what the pages said of each id, states the token's states
	// after each page, for a failure's message.
	trail  map[string][]string
	states []string
	also   string // more ids whose states trailOf tells (the history's projects)
}

func newReplica(viewer string) *replica {
	return &replica{viewer: viewer, objs: map[string]string{}, trail: map[string][]string{}}
}

// trailOf tells what the pages said of the ids a diff names.
func (r *replica) trailOf(diff string) string {
	var out []string
	for id, tr := range r.trail {
		if strings.Contains(diff, `"id":"`+id+`"`) {
			out = append(out, fmt.Sprintf("%s: %s", id, strings.Join(tr, "; ")))
		}
	}
	for _, st := range r.states {
		for id := range r.trail {
			if strings.HasPrefix(id, "prj#") && (strings.Contains(diff, id) || strings.Contains(r.also, id)) && strings.Contains(st, id) {
				out = append(out, st)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// page asks for one page and applies it; it returns the page, or the
// error's code.
func (r *replica) page(t testing.TB, e *testenv.Env, first int) (*syncPage, string) {
	t.Helper()
	res := e.Query(t, r.viewer, syncDoc, map[string]any{"since": r.token, "first": first})
	if len(res.Errors) > 0 {
		return nil, res.Errors[0].Code()
	}
	var d struct{ Sync syncPage }
	if err := json.Unmarshal(res.Data, &d); err != nil {
		t.Fatalf("sync: %v: %s", err, res.Data)
	}
	p := &d.Sync
	ids := map[string]bool{}
	for _, u := range p.Upserts {
		id := fmt.Sprint(u["id"])
		if ids[id] {
			t.Errorf("%s: %s twice in one page", r.viewer, id)
		}
		ids[id] = true
		b, _ := json.Marshal(u)
		r.objs[id] = string(b)
		r.trail[id] = append(r.trail[id], fmt.Sprintf("page %d upsert (%s)", r.pages, time.Now().Format("05.000")))
	}
	for _, tb := range p.Tombstones {
		if ids[tb.NodeID] {
			t.Errorf("%s: %s both upserted and a tombstone in one page", r.viewer, tb.NodeID)
		}
		ids[tb.NodeID] = true
		delete(r.objs, tb.NodeID)
		r.trail[tb.NodeID] = append(r.trail[tb.NodeID], fmt.Sprintf("page %d tombstone (%s)", r.pages, time.Now().Format("05.000")))
	}
	r.token = &p.NextToken
	r.states = append(r.states, fmt.Sprintf("page %d (%s): %s", r.pages, time.Now().Format("05.000"), graph.SyncTokenStates(r.viewer, p.NextToken)))
	r.pages++
	return p, ""
}

// sync pages to the end (a base sync when the replica has no token, or
// after SYNC_TOKEN_EXPIRED, with the copy dropped), and returns the pages.
func (r *replica) sync(t testing.TB, e *testenv.Env, first int) []*syncPage {
	t.Helper()
	var pages []*syncPage
	for i := 0; ; i++ {
		if i > 10_000 {
			t.Fatalf("%s: a sync of more than 10,000 pages", r.viewer)
		}
		p, code := r.page(t, e, first)
		switch {
		case code == "SYNC_TOKEN_EXPIRED":
			r.token, r.objs = nil, map[string]string{}
			continue
		case code != "":
			t.Fatalf("%s: sync refused with %s", r.viewer, code)
		}
		pages = append(pages, p)
		if !p.HasMore {
			return pages
		}
	}
}

// fullRead is what the API shows the viewer now, in the replica's shape:
// their profile, their projects with their members' profiles, the tasks
// and the comments.
func fullRead(t testing.TB, e *testenv.Env, viewer string) map[string]string {
	t.Helper()
	var d struct {
		Me map[string]any
	}
	// Every object at once, past the query cost limit that protects the
	// server from such reads.
	res := e.Send(t, map[string]any{"query": fullDoc}, e.As(viewer), testenv.Via(e.NewHandler(pipeline.Options{Limits: pipeline.Limits{ComplexityLimit: 1 << 40}}))).Decode(t)
	if len(res.Errors) > 0 || json.Unmarshal(res.Data, &d) != nil || d.Me == nil {
		t.Fatalf("%s: the full read failed: %s %+v", viewer, res.Data, res.Errors)
	}
	out := map[string]string{}
	put := func(typename string, v map[string]any, drop ...string) {
		c := maps.Clone(v)
		for _, k := range drop {
			delete(c, k)
		}
		c["__typename"] = typename
		b, _ := json.Marshal(c)
		out[fmt.Sprint(v["id"])] = string(b)
	}
	more := func(conn map[string]any, what string) []any {
		if pi, _ := conn["pageInfo"].(map[string]any); pi["hasNextPage"] == true {
			t.Fatalf("%s: more than 100 %s: the full read pages only once", viewer, what)
		}
		nodes, _ := conn["nodes"].([]any)
		return nodes
	}
	me := d.Me
	projects, _ := me["projects"].(map[string]any)
	put("User", me, "projects")
	for _, pn := range more(projects, "projects") {
		p := pn.(map[string]any)
		ms, _ := p["members"].([]any)
		short := make([]any, len(ms))
		for i, mn := range ms {
			m := mn.(map[string]any)
			u := m["user"].(map[string]any)
			put("User", u)
			short[i] = map[string]any{"role": m["role"], "user": map[string]any{"id": u["id"]}}
		}
		tasks, _ := p["tasks"].(map[string]any)
		p = maps.Clone(p)
		p["members"] = short
		put("Project", p, "tasks")
		for _, tn := range more(tasks, "tasks") {
			task := tn.(map[string]any)
			comments, _ := task["comments"].(map[string]any)
			put("Task", task, "comments")
			for _, cn := range more(comments, "comments") {
				put("Comment", cn.(map[string]any))
			}
		}
	}
	return out
}

// diffObjects describes how a replica differs from a full read.
func diffObjects(got, want map[string]string) string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(want)) {
		switch g, ok := got[id]; {
		case !ok:
			out = append(out, "missing "+want[id])
		case g != want[id]:
			out = append(out, fmt.Sprintf("stale %s\n   want %s", g, want[id]))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[id]; !ok {
			out = append(out, "extra "+got[id])
		}
	}
	return strings.Join(out, "\n")
}

// mustEqualFullRead checks that a replica, synced to the end, is what a
// full read shows its viewer.
func (r *replica) mustEqualFullRead(t testing.TB, e *testenv.Env) {
	t.Helper()
	if d := diffObjects(r.objs, fullRead(t, e, r.viewer)); d != "" {
		t.Errorf("%s's replica differs from a full read:\n%s", r.viewer, d)
	}
}

// trailOfWith is trailOf, telling the token's states of the projects named
// in history too.
func (r *replica) trailOfWith(diff, history string) string {
	r.also = history
	return r.trailOf(diff)
}
