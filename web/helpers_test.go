package web_test

import (
	"crypto/sha256"
	"encoding/hex"
)

// The helpers below are the same as graph's tests' (graph/live_test.go,
// graph/pipeline/trusted_test.go), for the transports' tests here.

// taskEventsSub subscribes to a project's events, with their tasks.
const taskEventsSub = `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) {
  cursor kind projectId subjectId at actor { id name } task { id title status version assignee { id name } } } }`

// sha is the hex SHA-256 of s: a trusted document's id after "sha256:".
func sha(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
