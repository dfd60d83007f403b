package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/ide"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// postGraphQL posts one operation with a token and returns its errors'
// codes (none: it ran) and the data.
func postGraphQL(t *testing.T, url, token, query string) (codes []string, data map[string]any) {
	t.Helper()
	res, err := testenv.PostURL(url+"query", "Bearer "+token, query, nil)
	if err != nil {
		t.Error(err)
		return []string{"no answer"}, nil
	}
	_ = json.Unmarshal(res.Data, &data)
	return res.Codes(), data
}

// firstProject returns the id of the viewer's newest project.
func firstProject(t *testing.T, url, token string) string {
	t.Helper()
	data := mustQuery(t, url, token, `{ me { projects(first: 1) { nodes { id } } } }`)
	return data["me"].(map[string]any)["projects"].(map[string]any)["nodes"].([]any)[0].(map[string]any)["id"].(string)
}

// createTasks sends n createTask mutations to the project, parallel at
// once, and returns how many were answered RATE_LIMITED and how many with
// another error. With stopAtLimit it sends no more after the first
// RATE_LIMITED.
func createTasks(t *testing.T, url, token, project string, n, parallel int, stopAtLimit bool) (limited, failed int64) {
	t.Helper()
	return sendMany(t, url, token, n, parallel, stopAtLimit, func(i int64) string {
		return fmt.Sprintf(`mutation { createTask(input: {projectId: %q, title: "seed %d"}) { id } }`, project, i)
	})
}

// sendMany sends n operations, parallel at once, and counts the answers
// that are RATE_LIMITED and those with another error.
func sendMany(t *testing.T, url, token string, n, parallel int, stopAtLimit bool, op func(i int64) string) (limited, failed int64) {
	t.Helper()
	var next, lim, bad atomic.Int64
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) || (stopAtLimit && lim.Load() > 0) {
					return
				}
				got, _ := postGraphQL(t, url, token, op(i))
				for _, c := range got {
					if c == codes.RateLimited {
						lim.Add(1)
					} else {
						bad.Add(1)
						t.Errorf("task %d: %s", i, c)
					}
				}
			}
		}()
	}
	wg.Wait()
	return lim.Load(), bad.Load()
}

// A seed script, or a frontend's end-to-end suite, against a plain start
// (no -production) is never refused by a rate limit: 500 mutations, 8 at
// once, as one user. With the production defaults (20 a second, bursts of
// 40) most of them would be RATE_LIMITED.
func TestAPlainStartHasNoRateLimit(t *testing.T) {
	cleanEnv(t)
	s := mustStart(t, "-data-dir=")
	defer s.stop()
	project := firstProject(t, s.url, s.token)
	limited, failed := createTasks(t, s.url, s.token, project, 500, 8, false)
	if limited != 0 || failed != 0 {
		t.Fatalf("500 mutations: %d RATE_LIMITED, %d other errors; want none", limited, failed)
	}
	var count int
	for after := "null"; ; {
		data := mustQuery(t, s.url, s.token, fmt.Sprintf(`{ project(id: %q) { tasks(first: 100, after: %s) { nodes { id } pageInfo { hasNextPage endCursor } } } }`, project, after))
		tasks := data["project"].(map[string]any)["tasks"].(map[string]any)
		count += len(tasks["nodes"].([]any))
		pi := tasks["pageInfo"].(map[string]any)
		if !pi["hasNextPage"].(bool) {
			break
		}
		after = fmt.Sprintf("%q", pi["endCursor"])
	}
	if count < 500 {
		t.Fatalf("the project has %d tasks after 500 answered createTask; want at least 500", count)
	}
}

// With -production the rate limits are on by default: a script that sends
// operations 8 at once meets RATE_LIMITED once its burst (40) is spent. The
// bucket refills 20 a second, so 500 operations could pass only if they
// took more than 23 s: they are the cheapest there is ({ __typename }, no
// DynamoDB call), so that not even the race detector on a busy machine
// makes them that slow.
func TestProductionLimitsByDefault(t *testing.T) {
	cleanEnv(t)
	const secret = "a-production-secret-of-at-least-32-characters"
	t.Setenv("JWT_SECRET", secret)
	s := mustStart(t, "-production", "-data-dir=")
	defer s.stop()
	token, err := (&auth.Authenticator{Secret: []byte(secret), MaxLifetime: time.Hour}).Sign("alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	limited, failed := sendMany(t, s.url, token, 500, 8, true, func(int64) string { return `{ __typename }` })
	if limited == 0 || failed != 0 {
		t.Fatalf("-production: %d RATE_LIMITED, %d other errors; want some RATE_LIMITED and no other error", limited, failed)
	}
}

// The IDE opens on the README's walk through the seven access patterns,
// and on a plain start it runs on the demo data as alice without errors,
// every pattern answering something.
func TestTheIDEsExampleIsTheREADMEsAndRuns(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```graphql\n"+ide.Example+"```\n") {
		t.Error("README.md's graphql block is not ide.Example: change them together")
	}
	cleanEnv(t)
	s := mustStart(t, "-data-dir=")
	defer s.stop()
	codes, data := postGraphQL(t, s.url, s.token, ide.Example)
	if len(codes) > 0 {
		t.Fatalf("the example answered errors %v", codes)
	}
	// nodes returns a connection's nodes, read from its edges (the
	// example selects edges { cursor node }, as normalized caches need).
	nodes := func(conn any) []map[string]any {
		var out []map[string]any
		for _, e := range conn.(map[string]any)["edges"].([]any) {
			e := e.(map[string]any)
			if e["cursor"].(string) == "" {
				t.Errorf("an edge without a cursor: %v", e)
			}
			out = append(out, e["node"].(map[string]any))
		}
		return out
	}
	me := data["me"].(map[string]any)
	project := nodes(me["projects"])[0]
	var comments int
	for _, task := range nodes(project["tasks"]) {
		comments += len(nodes(task["comments"]))
	}
	for pattern, n := range map[string]int{
		"1 profile":       len(me["email"].(string)),
		"2 projects":      len(nodes(me["projects"])),
		"3 project tasks": len(nodes(project["tasks"])),
		"4 assigned":      len(nodes(me["assignedTasks"])),
		"5 comments":      comments,
		"6 tasks by tag":  len(nodes(data["tasksByTag"])),
		"7 overdue":       len(nodes(me["overdueTasks"])),
	} {
		if n == 0 {
			t.Errorf("pattern %s answered nothing on the demo data", pattern)
		}
	}
}
