package testenv

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Dashboard is the contract's dashboard query: the viewer's projects,
// each with its members and a page of tasks, each task with its assignee,
// tags and first comments with their authors.
const Dashboard = `{ me { projects(first: 10) { nodes { name members { role user { name } }
	tasks(first: 20) { nodes { title dueDate assignee { name } tags { name }
	comments(first: 5) { nodes { body author { name } } } } } } } } }`

// Manifest reads the persisted-documents manifest graphql-codegen writes
// for the TypeScript client (scripts/clients; clients/ts/src/gql/
// persisted-documents.json, at path from the test's package) and returns
// its documents by operation name, with their keys.
func Manifest(tb testing.TB, path string) (keys map[string]string, docs map[string]string) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		tb.Fatal(err)
	}
	keys, docs = map[string]string{}, map[string]string{}
	for k, doc := range m {
		for _, kind := range []string{"query ", "mutation "} {
			if i := strings.Index(doc, kind); i >= 0 {
				name := strings.FieldsFunc(doc[i+len(kind):], func(r rune) bool { return r == '(' || r == ' ' || r == '{' })[0]
				keys[name], docs[name] = k, doc
			}
		}
	}
	return keys, docs
}
