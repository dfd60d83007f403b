package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// boardCounts returns, as alice sees them, the task counts of her projects
// by name and the comment counts of their tasks by title.
func boardCounts(t *testing.T, s *server) (map[string]map[string]any, map[string]float64) {
	t.Helper()
	data := mustQuery(t, s.url, s.token, `{ me { projects(first: 50) { nodes { name taskCounts { total todo inProgress done }
		tasks(first: 50) { nodes { title commentCount } } } } } }`)
	projects, comments := map[string]map[string]any{}, map[string]float64{}
	for _, n := range data["me"].(map[string]any)["projects"].(map[string]any)["nodes"].([]any) {
		p := n.(map[string]any)
		projects[p["name"].(string)] = p["taskCounts"].(map[string]any)
		for _, tn := range p["tasks"].(map[string]any)["nodes"].([]any) {
			task := tn.(map[string]any)
			comments[task["title"].(string)] = task["commentCount"].(float64)
		}
	}
	return projects, comments
}

// The demo data and a data file written before the counters both start with
// exact counts: the demo is imported counted, and a data file is counted
// afresh when loaded.
func TestStartShowsExactCounts(t *testing.T) {
	check := func(t *testing.T, s *server) {
		t.Helper()
		projects, comments := boardCounts(t, s)
		want := map[string]map[string]any{
			"Website relaunch": {"total": 6.0, "todo": 4.0, "inProgress": 1.0, "done": 1.0},
			"Mobile app":       {"total": 5.0, "todo": 3.0, "inProgress": 1.0, "done": 1.0},
		}
		for name, w := range want {
			got := projects[name]
			for k, v := range w {
				if got[k] != v {
					t.Errorf("%s: taskCounts %v, want %v", name, got, w)
					break
				}
			}
		}
		for title, n := range map[string]float64{"Write the landing page copy": 2, "Fix the broken signup form": 2,
			"Crash on start on Android 12": 4, "Set up analytics": 0} {
			if comments[title] != n {
				t.Errorf("%s: commentCount %v, want %v", title, comments[title], n)
			}
		}
	}
	t.Run("fresh demo data", func(t *testing.T) {
		cleanEnv(t)
		check(t, mustStart(t, "-data-dir", filepath.Join(t.TempDir(), "data")))
	})
	t.Run("a data file without counters", func(t *testing.T) {
		cleanEnv(t)
		var lines []string
		stripped := 0
		for _, l := range strings.Split(strings.TrimSpace(demoDump(t)), "\n") {
			var it map[string]map[string]any
			if json.Unmarshal([]byte(l), &it) == nil && it["Item"] != nil {
				for _, a := range []string{"todoCount", "inProgressCount", "doneCount", "commentCount"} {
					if _, ok := it["Item"][a]; ok {
						delete(it["Item"], a)
						stripped++
					}
				}
				b, _ := json.Marshal(it)
				l = string(b)
			} else { // the count line, as the versions before the counters wrote it: no checksum
				l = fmt.Sprintf(`{"Count":%d}`, len(lines))
			}
			lines = append(lines, l)
		}
		if stripped == 0 {
			t.Fatal("the demo dump has no counters to strip")
		}
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "task-manager.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		check(t, mustStart(t, "-data-dir", dir))
	})
}
