package web_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testenv"
)

// The helpers below are the same as graph's tests' (graph/live_test.go,
// graph/trusted_test.go), for the transports' tests here.

// taskEventsSub subscribes to a project's events, with their tasks.
const taskEventsSub = `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) {
  cursor kind projectId subjectId at actor { id name } task { id title status version assignee { id name } } } }`

// dial opens a WebSocket to srv as viewer.
func dial(t *testing.T, e *testenv.Env, srv *httptest.Server, viewer string) *testenv.WSClient {
	t.Helper()
	c, err := testenv.DialWS(t, srv, "Bearer "+e.Token(t, viewer))
	if err != nil {
		t.Fatalf("connecting as %s: %v", viewer, err)
	}
	return c
}

// sha is the hex SHA-256 of s: a trusted document's id after "sha256:".
func sha(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
