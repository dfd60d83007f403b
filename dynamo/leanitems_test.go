package dynamo

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/domain"
)

const leanP, leanT, leanC = "01HZX3J8Q5W8G2S8V7N1K6T0AB", "01HZX3J8Q5W8G2S8V7N1K6T0CD", "01HZX3J8Q5W8G2S8V7N1K6T0EF"

func leanS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// shown is an item's string attributes, for comparing items.
func shown(it item) map[string]string {
	out := map[string]string{}
	for a, v := range it {
		if sv, ok := v.(*types.AttributeValueMemberS); ok {
			out[a] = sv.Value
		} else {
			out[a] = "(not a string)"
		}
	}
	return out
}

// TestLeanAndWholeByTheKeys: lean leaves out of a task's and a comment's
// item exactly what its keys hold (a held value its keys contradict stays,
// and the caller's item is not changed); whole fills it back in from any
// item that comes back, the item's own or an index entry's (GSI4: the
// project from GSI4PK; GSI3: the keys of the table), and leaves other
// items and held values alone.
func TestLeanAndWholeByTheKeys(t *testing.T) {
	task := item{attrPK: leanS(taskPK(leanT)), attrSK: leanS(taskSK), attrGSI1PK: leanS(projectTasksPK(leanP)), "type": leanS(typeTask),
		"id": leanS(domain.TaskIDOf(leanT)), "projectId": leanS(domain.ProjectIDOf(leanP)), "title": leanS("t")}
	comment := item{attrPK: leanS(taskPK(leanT)), attrSK: leanS(commentSK(leanC)), "type": leanS(typeComment),
		"id": leanS(domain.CommentIDOf(leanT, leanC)), "taskId": leanS(domain.TaskIDOf(leanT)), "body": leanS("b")}
	without := func(it item, attrs ...string) item {
		c := maps.Clone(it)
		for _, a := range attrs {
			delete(c, a)
		}
		return c
	}
	with := func(it item, attr, v string) item { c := maps.Clone(it); c[attr] = leanS(v); return c }
	link := item{attrPK: leanS(taskPK(leanT)), attrSK: leanS(tagSK("x")), "type": leanS(typeTag), "taskId": leanS(domain.TaskIDOf(leanT))}
	user := item{attrPK: leanS(userPK("u")), attrSK: leanS(profileSK), "type": leanS(typeUser), "id": leanS("u")}
	for _, c := range []struct {
		name       string
		stored     item // what lean makes of the item as the store built it
		fat, whole item // the item as built; what whole makes of stored (nil: fat)
	}{
		{"a task", without(task, "id", "projectId"), task, nil},
		{"a comment", without(comment, "id", "taskId"), comment, nil},
		{"a task with another project's id", without(with(task, "projectId", domain.ProjectIDOf(leanC)), "id"),
			with(task, "projectId", domain.ProjectIDOf(leanC)), nil},
		{"a tag link", link, link, nil},
		{"a profile", user, user, nil},
		{"a task's GSI4 entry", item{attrPK: leanS(taskPK(leanT)), attrSK: leanS(taskSK), attrGSI4PK: leanS(leanTasksPK(leanP)), "title": leanS("t")}, nil,
			item{attrPK: leanS(taskPK(leanT)), attrSK: leanS(taskSK), attrGSI4PK: leanS(leanTasksPK(leanP)), "title": leanS("t"),
				"id": leanS(domain.TaskIDOf(leanT)), "projectId": leanS(domain.ProjectIDOf(leanP))}},
		{"a comment's GSI3 entry", item{attrPK: leanS(taskPK(leanT)), attrSK: leanS(commentSK(leanC)), attrGSI3PK: leanS(leanP), "body": leanS("b")}, nil,
			item{attrPK: leanS(taskPK(leanT)), attrSK: leanS(commentSK(leanC)), attrGSI3PK: leanS(leanP), "body": leanS("b"),
				"id": leanS(domain.CommentIDOf(leanT, leanC)), "taskId": leanS(domain.TaskIDOf(leanT))}},
		{"a task read without its project's keys", item{attrPK: leanS(taskPK(leanT)), attrSK: leanS(taskSK)}, nil,
			item{attrPK: leanS(taskPK(leanT)), attrSK: leanS(taskSK), "id": leanS(domain.TaskIDOf(leanT))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.fat != nil {
				before := shown(c.fat)
				if got := lean(c.fat); !maps.Equal(shown(got), shown(c.stored)) {
					t.Errorf("lean: %v, want %v", shown(got), shown(c.stored))
				}
				if !maps.Equal(shown(c.fat), before) {
					t.Errorf("lean changed its argument: %v, was %v", shown(c.fat), before)
				}
			}
			want := c.whole
			if want == nil {
				want = c.fat
			}
			got := maps.Clone(c.stored)
			whole(got)
			if !maps.Equal(shown(got), shown(want)) {
				t.Errorf("whole: %v, want %v", shown(got), shown(want))
			}
		})
	}
}

// TestTheStoresClientWritesLeanAndReadsWhole: every way the store puts an
// item (PutItem, BatchWriteItem, a transaction's Put) stores a task item
// lean, as its raw client reads it; the store's reads (GetItem, Query,
// BatchGetItem, Scan) and a cancelled transaction's old item (ALL_OLD)
// come back whole.
func TestTheStoresClientWritesLeanAndReadsWhole(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	table := aws.String(ts.Table())
	ids := newIDGen()
	fat := func() item {
		tu := ids.next(storeTestNow)
		return item{attrPK: leanS(taskPK(tu)), attrSK: leanS(taskSK), attrGSI1PK: leanS(projectTasksPK(leanP)), attrGSI1SK: leanS(dueSK(nil, tu)),
			attrGSI2PK: leanS(unassignedPK(leanP)), attrGSI2SK: leanS(dueSK(nil, tu)), "type": leanS(typeTask),
			"id": leanS(domain.TaskIDOf(tu)), "projectId": leanS(domain.ProjectIDOf(leanP)), "title": leanS("t")}
	}
	a, b, c := fat(), fat(), fat()
	if _, err := ts.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: a}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
		ts.Table(): {{PutRequest: &types.PutRequest{Item: b}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: table, Item: c}}}}); err != nil {
		t.Fatal(err)
	}
	for _, it := range []item{a, b, c} {
		out, err := ts.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: keyOf(it).av(), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Item == nil || out.Item["id"] != nil || out.Item["projectId"] != nil || out.Item["title"] == nil {
			t.Errorf("%s as stored: %v, want it without id and projectId", str(it, attrPK), shown(out.Item))
		}
		if it["id"] == nil {
			t.Errorf("the store's client changed the item it was given: %v", shown(it))
		}
	}
	var read []item
	got, err := ts.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: keyOf(a).av()})
	if err != nil {
		t.Fatal(err)
	}
	read = append(read, got.Item)
	items, err := ts.getItems(ctx, []key{keyOf(b), keyOf(c)})
	if err != nil {
		t.Fatal(err)
	}
	read = append(read, items...)
	listed, err := ts.queryAll(ctx, tasksOfProject, projectTasksPK(leanP))
	if err != nil {
		t.Fatal(err)
	}
	read = append(read, listed...)
	scanned, err := scanTypes(ctx, ts.db.(scanner), ts.Table(), typeTask)
	if err != nil {
		t.Fatal(err)
	}
	read = append(read, scanned...)
	if len(read) != 9 {
		t.Fatalf("read %d items, want 9", len(read))
	}
	want := map[string]map[string]string{}
	for _, it := range []item{a, b, c} {
		want[str(it, attrPK)] = shown(it)
	}
	for _, it := range read {
		if w := want[str(it, attrPK)]; !maps.Equal(shown(it), w) {
			t.Errorf("read %v, want %v", shown(it), w)
		}
	}
	cond := "attribute_not_exists(PK)"
	_, err = ts.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: table, Item: a, ConditionExpression: &cond,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 1 || tce.CancellationReasons[0].Item == nil {
		t.Fatalf("a put over an item that exists: %v, want a cancellation with the old item", err)
	}
	if old := shown(tce.CancellationReasons[0].Item); !maps.Equal(old, want[str(a, attrPK)]) {
		t.Errorf("the old item of a cancelled transaction: %v, want %v", old, want[str(a, attrPK)])
	}
}

// TestTheLeanClientWrapsEveryCallThatCarriesItems fails when a call the
// store makes (API, and the optional Scan) takes or returns items
// (attribute maps) and leanClient does not declare it: a call added to
// API would otherwise pass lean items through unfilled, or store whole
// ones.
func TestTheLeanClientWrapsEveryCallThatCarriesItems(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "leanitems.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := map[string]bool{}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil {
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok && (id.Name == "leanClient" || id.Name == "leanScan") {
				wrapped[fn.Name.Name] = true
			}
		}
	}
	attrs := reflect.TypeFor[map[string]types.AttributeValue]()
	checked := 0
	for _, it := range []reflect.Type{reflect.TypeFor[API](), reflect.TypeFor[scanner](), reflect.TypeFor[tableUpdater]()} {
		for i := range it.NumMethod() {
			m := it.Method(i)
			carries := holds(m.Type.In(1), attrs, map[reflect.Type]bool{}) || holds(m.Type.Out(0), attrs, map[reflect.Type]bool{})
			if carries {
				checked++
			}
			if carries != wrapped[m.Name] {
				t.Errorf("%s: carries items %v, declared by leanClient %v", m.Name, carries, wrapped[m.Name])
			}
		}
	}
	if checked < 7 {
		t.Errorf("only %d calls carry items: the check finds too little", checked)
	}
}

// holds reports whether a value of type t can hold a value of type want.
func holds(t, want reflect.Type, seen map[reflect.Type]bool) bool {
	if t == want {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holds(t.Elem(), want, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() && holds(t.Field(i).Type, want, seen) {
				return true
			}
		}
	}
	return false
}

// TestItemsAreWrittenLeanOnlyOnceMigrateSaysSo: on a table that held data
// before lean items (its lean-items marker not done), the store writes
// items whole, so an instance of the version before, still serving during
// a rolling deployment, reads every id it expects; the server with
// -create-table=false names the marker as pending; once migrate has run
// (RunBackfills, after the rollout), it writes them lean.
func TestItemsAreWrittenLeanOnlyOnceMigrateSaysSo(t *testing.T) {
	ts := newTestStore(t)
	ctx := context.Background()
	table := aws.String(ts.Table())
	if _, err := ts.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: table, Key: backfillKey(leanItemsGate.name).av()}); err != nil {
		t.Fatal(err)
	}
	ts.backfilled.Delete(leanItemsGate.name)
	ids := newIDGen()
	put := func() item {
		t.Helper()
		tu := ids.next(storeTestNow)
		it := item{attrPK: leanS(taskPK(tu)), attrSK: leanS(taskSK), attrGSI1PK: leanS(projectTasksPK(leanP)), "type": leanS(typeTask),
			"id": leanS(domain.TaskIDOf(tu)), "projectId": leanS(domain.ProjectIDOf(leanP)), "title": leanS("t")}
		if _, err := ts.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: it}); err != nil {
			t.Fatal(err)
		}
		out, err := ts.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: keyOf(it).av(), ConsistentRead: aws.Bool(true)})
		if err != nil || out.Item == nil {
			t.Fatalf("reading the item put back: %v", err)
		}
		return out.Item
	}
	if got := put(); got["id"] == nil || got["projectId"] == nil {
		t.Errorf("before migrate, a task is stored %v: want it whole", shown(got))
	}
	_, pending, err := ts.Pending(ctx)
	if err != nil || !slices.Contains(pending, leanItemsGate.name) {
		t.Errorf("pending backfills %v (%v), want %s among them", pending, err, leanItemsGate.name)
	}
	if err := ts.RunBackfills(ctx); err != nil {
		t.Fatal(err)
	}
	if got := put(); got["id"] != nil || got["projectId"] != nil {
		t.Errorf("after migrate, a task is stored %v: want it lean", shown(got))
	}
}
