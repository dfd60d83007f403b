package pipeline_test

import (
	"encoding/json"
	"testing"

	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

func TestDebugExtensionReportsTheOperationsCalls(t *testing.T) {
	e := testenv.New(t)
	s := e.MustSeed(t)
	store := dynamo.New(e.Emb.Client(client.Record), e.Store.Table())
	store.Now, store.Log = e.Store.Now, e.Store.Log
	q := `query($id: ID!) { project(id: $id) { tasks { nodes { assignee { name } } } } }`
	vars := map[string]any{"id": s.Project("Website relaunch").ID}
	for _, tc := range []struct {
		name  string
		debug bool
	}{{"debug mode adds extensions.dynamodb", true}, {"without debug mode there is none", false}} {
		t.Run(tc.name, func(t *testing.T) {
			e.Handler = e.NewHandler(pipeline.Options{Deps: pipeline.Deps{Store: store}, Debug: tc.debug}) // one batch per level, however busy the machine
			res := e.Query(t, "alice", q, vars)
			if len(res.Errors) > 0 {
				t.Fatalf("errors: %+v", res.Errors)
			}
			var ext struct {
				Extensions struct {
					DynamoDB *struct {
						Calls map[string]int
						Total int
					}
				}
			}
			body := e.Send(t, map[string]any{"query": q, "variables": vars}, e.As("alice")).Body
			if err := json.Unmarshal(body, &ext); err != nil {
				t.Fatal(err)
			}
			switch {
			case !tc.debug && ext.Extensions.DynamoDB != nil:
				t.Fatalf("extensions.dynamodb without debug mode: %s", body)
			case tc.debug && (ext.Extensions.DynamoDB == nil || ext.Extensions.DynamoDB.Total != 3 ||
				ext.Extensions.DynamoDB.Calls["BatchGetItem"] != 2 || ext.Extensions.DynamoDB.Calls["Query"] != 1):
				t.Fatalf("want 2 BatchGetItem and 1 Query (visibility, tasks, assignees), got %s", body)
			}
		})
	}
}
