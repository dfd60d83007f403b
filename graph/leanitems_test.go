package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// Lean items (docs/design.md, "Items"): a task's item is stored without
// the id and project id its keys hold, a comment's without its id and
// task id; items written before hold them, and read the same.

// keyHeld are the attributes of a task's and a comment's item that their
// keys hold.
var keyHeld = map[string][]string{"TASK": {"id", "projectId"}, "COMMENT": {"id", "taskId"}}

// TestLeanAndFatItemsAnswerTheSame seeds a table (the store's writes) and
// reads it raw through the SDK client: no task or comment item holds what
// its keys hold. Then every other task and comment item is put back the
// old way, whole (as the store's dump has it, which is what a version
// before wrote), and the table that mixes both answers as before: every
// screen of the side-by-side benchmark, everything alice may see with
// every field of a task (read from the items, not the lean index), tasks
// and comments by node id, a sync from scratch, and the store's dump; the
// table checker finds nothing. On every backend.
func TestLeanAndFatItemsAnswerTheSame(t *testing.T) {
	forBackends(t, func(t *testing.T, e *testenv.Env) {
		s := e.MustSeed(t)
		ctx := context.Background()
		stored := func() (lean, fat []map[string]types.AttributeValue) {
			p := dynamodb.NewScanPaginator(e.Client, &dynamodb.ScanInput{TableName: aws.String(e.Store.Table())})
			for p.HasMorePages() {
				out, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range out.Items {
					typ, _ := it["type"].(*types.AttributeValueMemberS)
					if typ == nil || keyHeld[typ.Value] == nil {
						continue
					}
					switch n := countHeld(it, keyHeld[typ.Value]); n {
					case 0:
						lean = append(lean, it)
					case 2:
						fat = append(fat, it)
					default:
						t.Errorf("a %s item holds %d of %v", typ.Value, n, keyHeld[typ.Value])
					}
				}
			}
			return lean, fat
		}
		lean, fat := stored()
		if len(fat) > 0 || len(lean) < 20 {
			t.Fatalf("seeded: %d lean task and comment items, %d holding what their keys hold; want every one lean", len(lean), len(fat))
		}
		before := leanAnswers(t, e, s)

		var buf bytes.Buffer
		if _, err := e.Store.Export(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		dump, err := dynamo.ReadDump(&buf)
		if err != nil {
			t.Fatal(err)
		}
		put := 0
		for i, it := range dump {
			typ, _ := it["type"].(*types.AttributeValueMemberS)
			if typ == nil || keyHeld[typ.Value] == nil || i%2 == 0 {
				continue
			}
			if countHeld(it, keyHeld[typ.Value]) != 2 {
				t.Fatalf("the dump's %s item %v lacks %v: a dump holds items whole", typ.Value, it["PK"], keyHeld[typ.Value])
			}
			if _, err := e.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.Store.Table()), Item: it}); err != nil {
				t.Fatal(err)
			}
			put++
		}
		lean, fat = stored()
		if len(fat) != put || len(lean) == 0 {
			t.Fatalf("after putting %d items whole: %d lean, %d whole; want both kinds", put, len(lean), len(fat))
		}
		after := leanAnswers(t, e, s)
		for i := range before {
			if before[i] != after[i] {
				t.Errorf("answers differ once items are stored whole:\nlean: %s\nmixed: %s", before[i], after[i])
			}
		}
		for _, v := range testenv.CheckTable(e.Items(t)) {
			t.Errorf("table: %s", v)
		}
	})
}

// countHeld counts the attributes of names an item holds.
func countHeld(it map[string]types.AttributeValue, names []string) int {
	n := 0
	for _, a := range names {
		if it[a] != nil {
			n++
		}
	}
	return n
}

// leanAnswers reads what alice may see through every path that reads task
// and comment items, and the store's dump, each as one string.
func leanAnswers(t *testing.T, e *testenv.Env, s *testenv.Seed) []string {
	t.Helper()
	var out []string
	for _, q := range screenQueries(s) {
		res := e.Query(t, "alice", q.doc, q.vars)
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %+v", q.name, res.Errors)
		}
		out = append(out, q.name+" "+string(res.Data))
	}
	full := e.Send(t, map[string]any{"query": fullDoc}, e.As("alice"),
		testenv.Via(e.NewHandler(pipeline.Options{Limits: pipeline.Limits{ComplexityLimit: 1 << 40}}))).Decode(t)
	if len(full.Errors) > 0 {
		t.Fatalf("full read: %+v", full.Errors)
	}
	out = append(out, "full "+string(full.Data))
	all := ids(full.Data)
	for lo := 0; lo < len(all); lo += 20 {
		var doc strings.Builder
		doc.WriteString("{")
		for i, id := range all[lo:min(lo+20, len(all))] {
			fmt.Fprintf(&doc, ` n%d: node(id: %q) { id ... on Task { project { id } title } ... on Comment { task { id project { id } } body } }`, i, id)
		}
		doc.WriteString(" }")
		res := e.Query(t, "alice", doc.String(), nil)
		if len(res.Errors) > 0 {
			t.Fatalf("nodes: %+v", res.Errors)
		}
		out = append(out, "nodes "+string(res.Data))
	}
	r := newReplica("alice")
	r.sync(t, e, 100)
	objs := slices.Sorted(maps.Values(r.objs))
	out = append(out, "sync "+strings.Join(objs, "\n"))
	var buf bytes.Buffer
	if _, err := e.Store.Export(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	out = append(out, "dump "+buf.String())
	return out
}

// ids returns the ids of the tasks and comments of an answer, sorted.
func ids(data json.RawMessage) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if id, ok := v["id"].(string); ok && (strings.HasPrefix(id, "tsk#") || strings.HasPrefix(id, "cmt#")) {
				out = append(out, id)
			}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	var v any
	_ = json.Unmarshal(data, &v)
	walk(v)
	slices.Sort(out)
	return slices.Compact(out)
}
