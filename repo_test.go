package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// What the tools leave in a checkout stays out of git and out of the
// image: the data directory, the test tools' cache (.cache: DynamoDB
// Local's jar, 64 MB), DynamoDB Local's metadata file; and the scripts
// start DynamoDB Local with its telemetry off, from a working folder
// outside the tree, so that it writes no metadata file into it: while
// scripts/test's DynamoDB Local runs, the root has none.
func TestLocalStateStaysOutOfGitAndTheImage(t *testing.T) {
	local := []string{".taskgraph", ".cache", "dynamodb-local-metadata.json"}
	if _, err := exec.LookPath("git"); err == nil {
		for _, p := range []string{".taskgraph/task-manager.jsonl", ".cache", "dynamodb-local-metadata.json"} {
			if out, err := exec.Command("git", "check-ignore", "--no-index", "-q", p).CombinedOutput(); err != nil {
				t.Errorf("git does not ignore %s: %v %s", p, err, out)
			}
		}
		if out, err := exec.Command("git", "ls-files", "dynamodb-local-metadata.json", ".cache").Output(); err == nil && len(out) > 0 {
			t.Errorf("git holds %s", out)
		}
	}
	dockerignore, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range local {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(p) + `/?$`).Match(dockerignore) {
			t.Errorf(".dockerignore does not leave out %s", p)
		}
	}
	scripts, _ := filepath.Glob(filepath.Join("scripts", "*"))
	starts := 0
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range regexp.MustCompile(`\(cd \\?"[^"\\]+\\?" && exec java [^)]*\)|java [^\n]*DynamoDBLocal\.jar[^\n]*`).FindAllString(string(b), -1) {
			starts++
			if !strings.HasPrefix(cmd, `(cd `) || !strings.Contains(cmd, "-disableTelemetry") {
				t.Errorf("%s starts DynamoDB Local without -disableTelemetry, or in the tree's folder: %s", s, cmd)
			}
		}
	}
	if starts < 2 {
		t.Errorf("found %d starts of DynamoDB Local in scripts/ (scripts/test, scripts/bench-stores, scripts/cluster): the check is broken", starts)
	}
	if os.Getenv("DYNAMODB_LOCAL_ENDPOINT") != "" {
		if _, err := os.Stat("dynamodb-local-metadata.json"); err == nil {
			t.Error("DynamoDB Local, started by scripts/test, wrote dynamodb-local-metadata.json into the tree")
		}
	}
}
