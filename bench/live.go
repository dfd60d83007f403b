package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/app"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/telemetry"
	"github.com/taskgraph/taskgraph/live"
)

// LiveHandler returns the handler of one more server instance with live
// updates, on the Env's table and client (so the Env's Counter sees its
// calls too), its broker connected to natsURL: its own store, whose events
// go to the broker, its own hub (app.App, the server's own, without
// its background workers or listener). It stops when the test ends. One viewer runs every benchmark subscriber, so
// the per-viewer subscription limit is lifted.
func (e *Env) LiveHandler(tb testing.TB, natsURL string) http.Handler {
	tb.Helper()
	store := app.NewStore(e.Client, e.Store.Table(), e.log, func() time.Time { return Now })
	tel, err := telemetry.New(context.Background(), telemetry.Config{Metrics: true, Env: func(string) string { return "" }})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	e.liveTel = tel
	a := &app.App{Store: store, Auth: e.auth, Telemetry: tel, Hooks: app.Hooks{NoListen: true, NoBackground: true},
		Config: app.Config{Live: live.Config{URL: natsURL, Name: "bench"},
			Limits: pipeline.Limits{Timeout: HandlerTimeout, MaxSubscriptionsPerViewer: 1 << 30}}}
	if err := a.Open(context.Background()); err != nil {
		tb.Fatalf("starting live updates: %v", err)
	}
	e.live = append(e.live, store)
	tb.Cleanup(func() { _ = a.Close() })
	return a.Handler
}

// Settle waits until the live instances' stores have deleted the outbox
// items of the events they published (a background delete after each
// change), so that a count of calls taken afterwards includes them.
func (e *Env) Settle() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, s := range e.live {
		_ = s.FlushOutbox(ctx)
	}
}

// Token returns the viewer's bearer token (without "Bearer ").
func (e *Env) Token() string { return e.header[len("Bearer "):] }

// Post sends a GraphQL operation as the viewer to the /query of the server
// at base (an http:// URL), over HTTP, and decodes its data into out; an
// error status or any GraphQL error is an error.
func (e *Env) Post(ctx context.Context, base, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/query", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", e.header)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors json.RawMessage
	}
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		return fmt.Errorf("status %d: %w", res.StatusCode, err)
	}
	if res.StatusCode != http.StatusOK || len(r.Errors) > 0 {
		return fmt.Errorf("status %d: %s", res.StatusCode, r.Errors)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(r.Data, out)
}

// CreateTask creates a task assigned to the viewer in the project through
// the server at base and returns its id.
func (e *Env) CreateTask(ctx context.Context, base, project, title string) (string, error) {
	var d struct{ CreateTask struct{ ID string } }
	err := e.Post(ctx, base, `mutation($in: CreateTaskInput!) { createTask(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"projectId": project, "title": title, "assigneeId": Viewer}}, &d)
	return d.CreateTask.ID, err
}

// RenameTask changes a task's title through the server at base.
func (e *Env) RenameTask(ctx context.Context, base, task, title string) error {
	var d struct{ UpdateTask struct{ Title string } }
	if err := e.Post(ctx, base, `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { title } }`,
		map[string]any{"in": map[string]any{"id": task, "title": title}}, &d); err != nil {
		return err
	}
	if d.UpdateTask.Title != title {
		return fmt.Errorf("updateTask answered the title %q, want %q", d.UpdateTask.Title, title)
	}
	return nil
}

// CreateProjectWithTask creates a project of the viewer's, with one task,
// through the server at base, and returns their ids.
func (e *Env) CreateProjectWithTask(ctx context.Context, base, name string) (project, task string, err error) {
	var d struct{ CreateProject struct{ ID string } }
	if err := e.Post(ctx, base, `mutation($in: CreateProjectInput!) { createProject(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": name}}, &d); err != nil {
		return "", "", err
	}
	task, err = e.CreateTask(ctx, base, d.CreateProject.ID, name)
	return d.CreateProject.ID, task, err
}
