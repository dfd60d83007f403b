package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/internal/testenv"
	"github.com/taskgraph/taskgraph/policy"
)

// TestSyncClient runs the TypeScript offline client of clients/sync (a
// replica kept by sync and projectEvents over graphql-ws, compiled by tsc
// --strict) against the real server, started as `go run .` starts it with
// a data directory: a base sync in pages, events from the sync's token, then
// the client offline while the server restarts and other users change
// things, and the kept token bringing all of it. Each check of the script
// is a subtest (clients/sync/src/check.ts). It needs the Node tools; without
// them it is skipped, unless CI is set.
func TestSyncClient(t *testing.T) {
	nodeModules := mustNodeTools(t)
	tsc := filepath.Join(nodeModules, ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Skip("node_modules has no TypeScript")
	}
	out := t.TempDir()
	if b, err := exec.Command(tsc, "-p", filepath.Join("clients", "sync"), "--outDir", out).CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, b)
	}
	// The compiled client is an ES module; it finds its packages beside it.
	if err := os.WriteFile(filepath.Join(out, "package.json"), []byte(`{"type":"module"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(nodeModules, filepath.Join(out, "node_modules")); err != nil {
		t.Fatal(err)
	}

	cleanEnv(t)
	const secret = "sync-client-test-secret"
	t.Setenv("JWT_SECRET", secret)
	dir := filepath.Join(t.TempDir(), "data")
	authn := &auth.Authenticator{Secret: []byte(secret)}
	token := func(user string) string {
		tok, err := authn.Sign(user, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	c := &syncControl{t: t, srv: mustStart(t, "-data-dir", dir), dir: dir, alice: token("alice"), bob: token("bob")}
	defer func() { _ = c.current().stop() }()
	ctl := httptest.NewServer(c)
	t.Cleanup(ctl.Close)

	runNodeChecks(t, nodeModules, filepath.Join(out, "check.js"), map[string]any{
		"url": c.current().url + "query", "control": ctl.URL, "alice": c.alice, "bob": c.bob, "waitMs": 20_000,
	})
}

// syncControl is what the client's checks ask of the test: changes made by
// other users, and a restart of the server.
type syncControl struct {
	t          *testing.T
	dir        string
	alice, bob string

	mu     sync.Mutex
	srv    *server
	rounds int
}

func (c *syncControl) current() *server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.srv
}

func (c *syncControl) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var events map[string]int
	var err error
	switch r.URL.Path {
	case "/changes":
		events, err = c.changes()
	case "/restart":
		err = c.restart()
	default:
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"url": c.current().url + "query", "events": events})
}

// gql posts a query as the bearer of token and decodes its data into out.
func (c *syncControl) gql(token, query string, vars map[string]any, out any) error {
	res, err := testenv.PostURL(c.current().url+"query", "Bearer "+token, query, vars)
	if err != nil {
		return err
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("%s: %+v", query, res.Errors)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(res.Data, out)
}

// alicesProjects returns alice's projects by name.
func (c *syncControl) alicesProjects() (map[string]string, error) {
	var d struct {
		Me struct {
			Projects struct{ Nodes []struct{ ID, Name string } }
		}
	}
	if err := c.gql(c.alice, `{ me { projects(first: 100) { nodes { id name } } } }`, nil, &d); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range d.Me.Projects.Nodes {
		out[p.Name] = p.ID
	}
	return out, nil
}

// changes makes, in each of alice's projects, a round of changes by bob
// (and alice on another device): a task made, renamed, commented on and
// moved, another made and deleted, a comment deleted. It returns how many
// events each project's stream carries.
func (c *syncControl) changes() (map[string]int, error) {
	c.mu.Lock()
	c.rounds++
	round := c.rounds
	c.mu.Unlock()
	projects, err := c.alicesProjects()
	if err != nil {
		return nil, err
	}
	events := map[string]int{}
	for name, pid := range projects {
		who := c.bob
		if name == "Website relaunch" {
			who = c.alice // bob and alice both: bob's changes here, alice's from another device there
		}
		var t1, t2 struct{ CreateTask struct{ ID string } }
		var cm struct{ AddComment struct{ ID string } }
		steps := []func() error{
			func() error {
				return c.gql(who, `mutation($p: ID!, $t: String!) { createTask(input: {projectId: $p, title: $t, tags: ["sync"]}) { id } }`,
					map[string]any{"p": pid, "t": fmt.Sprintf("Round %d in %s", round, name)}, &t1)
			},
			func() error {
				return c.gql(who, `mutation($id: ID!) { updateTask(input: {id: $id, title: "Renamed", status: IN_PROGRESS}) { id } }`,
					map[string]any{"id": t1.CreateTask.ID}, nil)
			},
			func() error {
				return c.gql(who, `mutation($id: ID!) { addComment(input: {taskId: $id, body: "first"}) { id } }`, map[string]any{"id": t1.CreateTask.ID}, &cm)
			},
			func() error {
				return c.gql(who, `mutation($id: ID!) { addComment(input: {taskId: $id, body: "second"}) { id } }`, map[string]any{"id": t1.CreateTask.ID}, nil)
			},
			func() error {
				return c.gql(who, `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": cm.AddComment.ID}, nil)
			},
			func() error {
				return c.gql(who, `mutation($p: ID!) { createTask(input: {projectId: $p, title: "Short-lived"}) { id } }`, map[string]any{"p": pid}, &t2)
			},
			func() error {
				return c.gql(who, `mutation($id: ID!) { deleteTask(id: $id) }`, map[string]any{"id": t2.CreateTask.ID}, nil)
			},
			func() error {
				return c.gql(who, `mutation($id: ID!) { updateTask(input: {id: $id, status: DONE, dueDate: "2026-09-01"}) { id } }`,
					map[string]any{"id": t1.CreateTask.ID}, nil)
			},
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return nil, err
			}
		}
		events[pid] = len(steps)
	}
	return events, nil
}

// restart stops the server and starts it again on its data directory, then
// changes things while alice's client is offline: bob renames and deletes,
// removes dave (who shares no other project with alice) from his project,
// makes a project with alice in it, and removes alice from his "Mobile app".
func (c *syncControl) restart() error {
	c.mu.Lock()
	old := c.srv
	c.mu.Unlock()
	if err := old.stop(); err != nil {
		return fmt.Errorf("stopping the server: %w", err)
	}
	srv := mustStart(c.t, "-data-dir", c.dir)
	c.mu.Lock()
	c.srv = srv
	c.mu.Unlock()
	projects, err := c.alicesProjects()
	if err != nil {
		return err
	}
	app, web := projects["Mobile app"], projects["Website relaunch"]
	before, err := c.syncToken() // where a sync of alice's stands before the changes
	if err != nil {
		return err
	}
	var tasks struct {
		Project struct {
			Owner struct{ ID string }
			Tasks struct {
				Nodes []struct {
					ID       string
					Assignee *struct{ ID string }
				}
			}
		}
	}
	if err := c.gql(c.bob, `query($p: ID!) { project(id: $p) { owner { id } tasks(first: 20) { nodes { id assignee { id } } } } }`, map[string]any{"p": web}, &tasks); err != nil {
		return err
	}
	// bob deletes the second task, or the first after it that policy lets
	// him delete (policy.MayDeleteTask): the test follows the rule.
	deleted := ""
	for _, n := range tasks.Project.Tasks.Nodes[1:] {
		t := &domain.Task{ID: n.ID, ProjectID: web}
		if n.Assignee != nil {
			t.AssigneeID = &n.Assignee.ID
		}
		if _, err := policy.MayDeleteTask("bob", t, &domain.Project{ID: web, OwnerID: tasks.Project.Owner.ID}); err == nil {
			deleted = n.ID
			break
		}
	}
	var made struct{ CreateProject struct{ ID string } }
	for _, step := range []struct {
		token, query string
		vars         map[string]any
		out          any
	}{
		{c.bob, `mutation($id: ID!) { updateTask(input: {id: $id, title: "Renamed offline"}) { id } }`, map[string]any{"id": tasks.Project.Tasks.Nodes[0].ID}, nil},
		{c.bob, `mutation($id: ID!) { deleteTask(id: $id) }`, map[string]any{"id": deleted}, nil},
		{c.bob, `mutation { updateProfile(input: {name: "Bob (offline rename)"}) { id } }`, nil, nil},
		{c.bob, `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "dave") { id } }`, map[string]any{"p": app}, nil},
		{c.bob, `mutation { createProject(input: {name: "Made while alice was offline"}) { id } }`, nil, &made},
		{c.bob, `mutation($p: ID!) { addProjectMember(projectId: $p, userId: "alice") { id } }`, nil, nil},
		{c.bob, `mutation($p: ID!) { createTask(input: {projectId: $p, title: "Waiting for alice"}) { id } }`, nil, nil},
		{c.bob, `mutation($p: ID!) { removeProjectMember(projectId: $p, userId: "alice") { id } }`, map[string]any{"p": app}, nil},
	} {
		if step.vars == nil {
			step.vars = map[string]any{"p": made.CreateProject.ID}
		}
		if err := c.gql(step.token, step.query, step.vars, step.out); err != nil {
			return err
		}
	}
	// The profile's copy into the change logs of bob's projects is the
	// cleanup worker's, which the server kicks at once: wait until a sync
	// from a token taken before the changes brings it, as the client's
	// sync will.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if got, err := c.syncedName(before, "bob"); err != nil || got == "Bob (offline rename)" {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bob's new name is in no sync after 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncToken pages a base sync of alice's to its end and returns its token.
func (c *syncControl) syncToken() (*string, error) {
	var since *string
	for {
		var d struct {
			Sync struct {
				NextToken string
				HasMore   bool
			}
		}
		if err := c.gql(c.alice, `query($s: String) { sync(since: $s) { nextToken hasMore } }`, map[string]any{"s": since}, &d); err != nil {
			return nil, err
		}
		since = &d.Sync.NextToken
		if !d.Sync.HasMore {
			return since, nil
		}
	}
}

// syncedName pages alice's sync from since to its end and returns the name
// it gives user, "" if none.
func (c *syncControl) syncedName(since *string, user string) (string, error) {
	name := ""
	for {
		var d struct {
			Sync struct {
				NextToken string
				HasMore   bool
				Upserts   []struct{ ID, Name string }
			}
		}
		if err := c.gql(c.alice, `query($s: String) { sync(since: $s) { nextToken hasMore upserts { ... on User { id name } } } }`,
			map[string]any{"s": since}, &d); err != nil {
			return "", err
		}
		for _, u := range d.Sync.Upserts {
			if u.ID == user {
				name = u.Name
			}
		}
		if !d.Sync.HasMore {
			return name, nil
		}
		since = &d.Sync.NextToken
	}
}
