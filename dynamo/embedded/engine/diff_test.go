package engine_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/dynamo"
	"github.com/taskgraph/taskgraph/dynamo/client"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

var (
	diffOps  = flag.Int("diff.ops", 1000, "calls TestEdgesAgainstDynamoDBLocal makes")
	diffSeed = flag.Uint64("diff.seed", 1, "seed of TestEdgesAgainstDynamoDBLocal's random sequence")
)

// TestEdgesAgainstDynamoDBLocal is the differential test of the edges the
// model test does not reach: random calls on the project's table
// definition, each made on the embedded store and on DynamoDB Local
// (testenv.Tee compares every answer, error code, LastEvaluatedKey and
// cancellation reason), over a small key space so that calls meet: Limit
// with a filter, pages run to a partition's end, backward queries,
// begins_with, BETWEEN and comparisons on sort keys, both indexes with
// items entering and leaving them, transactions cancelled with per-item
// reasons, client request tokens replayed and misused, 100-key
// BatchGetItem, items near 400 KB and the 1 MB page, empty strings, maps,
// lists and sets, and the updates the store makes (SET, ADD, REMOVE,
// DELETE, nested map paths). -args -diff.ops N -diff.seed S for more.
func TestEdgesAgainstDynamoDBLocal(t *testing.T) {
	// The production client options (no response checksum on loopback:
	// the SDK's check of a large answer of DynamoDB Local's sometimes
	// fails reading it), without retries: a call is made once on each
	// store, or its error is a difference.
	once := func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} }
	ref := testenv.Client(t, testenv.DynamoDBLocal, client.Options(once)...)
	emb := testenv.Embedded(t)
	tee := testenv.NewTee(t, emb.Client(client.Options(once)...), ref)
	table := fmt.Sprintf("edges-%d", time.Now().UnixNano())
	ctx := context.Background()
	if _, err := tee.CreateTable(ctx, dynamo.TableDefinition(table)); err != nil {
		t.Fatal(err)
	}
	g := &edgeGen{rng: rand.New(rand.NewPCG(*diffSeed, 0xed9e)), table: table}
	for i := 0; i < *diffOps && !t.Failed(); i++ {
		g.step(ctx, tee)
		if i%300 == 299 {
			sameTables(t, emb.Client(), ref, table)
		}
	}
	sameTables(t, emb.Client(), ref, table)
	t.Logf("seed %d: %v calls compared, %d answered differently", *diffSeed, tee.Calls(), tee.Diffs())
	for _, op := range []string{"PutItem", "UpdateItem", "DeleteItem", "GetItem", "BatchGetItem", "BatchWriteItem", "Query", "TransactWriteItems"} {
		if tee.Calls()[op] == 0 && *diffOps >= 500 {
			t.Errorf("no %s compared", op)
		}
	}
}

// sameTables compares the whole tables, each scanned to its end.
func sameTables(t *testing.T, a, b *dynamodb.Client, table string) {
	t.Helper()
	all := func(c *dynamodb.Client) []string {
		var out []string
		p := dynamodb.NewScanPaginator(c, &dynamodb.ScanInput{TableName: aws.String(table)})
		for p.HasMorePages() {
			page, err := p.NextPage(context.Background())
			if err != nil {
				t.Fatalf("scanning: %v", err)
			}
			for _, it := range page.Items {
				out = append(out, testenv.CanonItem(it))
			}
		}
		slices.Sort(out)
		return out
	}
	ia, ib := all(a), all(b)
	if !slices.Equal(ia, ib) {
		t.Errorf("the tables differ: %d items, reference %d", len(ia), len(ib))
		for _, x := range ia {
			if !slices.Contains(ib, x) {
				t.Errorf("only in the embedded store: %.300s", x)
			}
		}
		for _, x := range ib {
			if !slices.Contains(ia, x) {
				t.Errorf("only in DynamoDB Local: %.300s", x)
			}
		}
	}
}

type edgeGen struct {
	rng   *rand.Rand
	table string
	// the last transaction that succeeded, and its token
	lastTx *dynamodb.TransactWriteItemsInput
	n      int
	ties   int
}

type av = types.AttributeValue

func s(v string) av                       { return &types.AttributeValueMemberS{Value: v} }
func n(v int) av                          { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
func ss(v ...string) av                   { return &types.AttributeValueMemberSS{Value: v} }
func m(kv map[string]av) av               { return &types.AttributeValueMemberM{Value: kv} }
func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

var (
	edgePKs = []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	edgeSKs = []string{"a", "a#1", "a#10", "a#2", "ab", "b", "b#1", "b#2", "c", "c#1", "c#x", "d", "e#1", "e#2", "f", "g#1", "g#2", "h", "i", "j"}
)

func (g *edgeGen) key() map[string]av {
	return map[string]av{"PK": s(pick(g.rng, edgePKs...)), "SK": s(pick(g.rng, edgeSKs...))}
}

// item is a random item with key k: sometimes in GSI1 and GSI2 (index
// sort keys unique, from the table key: a store's order of equal index
// keys is its own), with empty strings, maps, lists and sets, and on
// partition p0 sometimes a string near 400 KB.
func (g *edgeGen) item(k map[string]av) map[string]av {
	r := g.rng
	it := map[string]av{"PK": k["PK"], "SK": k["SK"]}
	id := k["PK"].(*types.AttributeValueMemberS).Value + "/" + k["SK"].(*types.AttributeValueMemberS).Value
	if r.IntN(10) < 6 {
		it["GSI1PK"] = s(pick(r, "g0", "g1"))
		it["GSI1SK"] = s(pick(r, "x", "y", "z") + "#" + id)
	}
	if r.IntN(10) < 3 {
		it["GSI2PK"] = s("h0")
		it["GSI2SK"] = s(pick(r, "DUE#2026", "DUE#2027", "DUE#~") + "#" + id)
	}
	if r.IntN(10) < 4 { // GSI3 projects these three only; keyed on PK, unique here (a store orders ties its own way)
		it["GSI3PK"] = s(pick(r, "c0", "c1") + "#" + k["SK"].(*types.AttributeValueMemberS).Value)
		for _, a := range []string{"authorId", "body", "createdAt"} {
			if r.IntN(3) > 0 {
				it[a] = s(pick(r, "", "alice", "a comment", "2026-12-05T14:41:05.1Z"))
			}
		}
	}
	if r.IntN(2) == 0 {
		it["v"] = n(r.IntN(20) - 5)
	}
	if r.IntN(2) == 0 {
		it["s"] = s(pick(r, "", "x", "open", "done"))
	}
	if r.IntN(4) == 0 {
		it["ss"] = ss(slices.Compact(slices.Sorted(slices.Values([]string{pick(r, "a", "b"), pick(r, "b", "c")})))...)
	}
	if r.IntN(4) == 0 {
		it["m"] = m(map[string]av{})
		if r.IntN(2) == 0 {
			it["m"] = m(map[string]av{"k": s("v"), "e": s("")})
		}
	}
	if r.IntN(5) == 0 {
		it["l"] = &types.AttributeValueMemberL{Value: []av{s(""), n(1), &types.AttributeValueMemberNULL{Value: true}, m(map[string]av{})}}
	}
	if r.IntN(6) == 0 {
		it["b"] = &types.AttributeValueMemberBOOL{Value: r.IntN(2) == 0}
	}
	if id[:2] == "p0" && r.IntN(3) == 0 {
		it["big"] = s(strings.Repeat("x", pick(r, 100, 250, 390, 399, 410)*1000))
	}
	return it
}

// condition is a random condition on an item (or none).
func (g *edgeGen) condition() (expr *string, names map[string]string, values map[string]av) {
	switch g.rng.IntN(7) {
	case 0:
		return aws.String("attribute_not_exists(PK)"), nil, nil
	case 1:
		return aws.String("attribute_exists(#pk)"), map[string]string{"#pk": "PK"}, nil
	case 2:
		return aws.String("v < :c"), nil, map[string]av{":c": n(g.rng.IntN(10))}
	case 3:
		return aws.String("attribute_not_exists(v) OR v <= :c"), nil, map[string]av{":c": n(3)}
	case 4:
		return aws.String("s = :s"), nil, map[string]av{":s": s(pick(g.rng, "", "open"))}
	}
	return nil, nil, nil
}

// update is a random update expression, as the store writes them and a
// few it does not.
func (g *edgeGen) update() (expr string, names map[string]string, values map[string]av) {
	switch g.rng.IntN(12) {
	case 0:
		return "SET v = :v", nil, map[string]av{":v": n(g.rng.IntN(9))}
	case 1:
		return "ADD v :one", nil, map[string]av{":one": n(1)}
	case 2:
		return "REMOVE s", nil, nil
	case 3:
		return "SET #m.#k = :v", map[string]string{"#m": "m", "#k": pick(g.rng, "k", "n1")}, map[string]av{":v": s("set")}
	case 4:
		return "REMOVE #m.#k", map[string]string{"#m": "m", "#k": "k"}, nil
	case 5:
		return "SET s = :s ADD v :one", nil, map[string]av{":s": s(pick(g.rng, "", "open", "done")), ":one": n(-1)}
	case 6:
		return "ADD ss :set", nil, map[string]av{":set": ss(pick(g.rng, "a", "d"))}
	case 7:
		g.ties++ // index keys stay unique: a store orders equal ones its own way
		return "SET GSI1PK = :g, GSI1SK = :gs", nil, map[string]av{":g": s("g1"), ":gs": s(fmt.Sprintf("w#%d", g.ties))}
	case 8:
		return "REMOVE GSI1PK, GSI2SK", nil, nil
	case 9:
		return "SET #t = :t", map[string]string{"#t": "type"}, map[string]av{":t": s("TAGS")}
	case 10:
		if g.rng.IntN(2) == 0 {
			g.ties++
			return "SET GSI3PK = :g3, body = :bd", nil, map[string]av{":g3": s(fmt.Sprintf("c1#w%d", g.ties)), ":bd": s("edited")}
		}
		return pick(g.rng, "REMOVE GSI3PK", "REMOVE body"), nil, nil
	}
	return "SET m = :m", nil, map[string]av{":m": m(map[string]av{"_": s("")})}
}

func (g *edgeGen) step(ctx context.Context, tee *testenv.Tee) {
	g.n++
	r := g.rng
	tb := aws.String(g.table)
	switch k := r.IntN(100); {
	case k < 14: // PutItem
		c, names, values := g.condition()
		_, _ = tee.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: g.item(g.key()), ConditionExpression: c,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValues: pick(r, types.ReturnValueNone, types.ReturnValueAllOld)})
	case k < 28: // UpdateItem
		u, names, values := g.update()
		c, cn, cv := g.condition()
		names, values = merge(names, cn), merge(values, cv)
		ret := pick(r, types.ReturnValueNone, types.ReturnValueAllNew, types.ReturnValueAllOld, types.ReturnValueUpdatedNew, types.ReturnValueUpdatedOld)
		if strings.Contains(u, ".") && strings.HasPrefix(string(ret), "UPDATED") { // a nested path's: not the same (docs/design.md)
			ret = types.ReturnValueAllNew
		}
		_, _ = tee.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: g.key(), UpdateExpression: aws.String(u), ConditionExpression: c,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValues: ret})
	case k < 33: // DeleteItem
		c, names, values := g.condition()
		_, _ = tee.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: tb, Key: g.key(), ConditionExpression: c,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValues: pick(r, types.ReturnValueNone, types.ReturnValueAllOld)})
	case k < 40: // GetItem
		_, _ = tee.GetItem(ctx, &dynamodb.GetItemInput{TableName: tb, Key: g.key(), ConsistentRead: aws.Bool(r.IntN(2) == 0)})
	case k < 46: // BatchGetItem, up to every key (120), 100 the most allowed
		var keys []map[string]av
		want := pick(r, 1, 5, 40, 100, 101)
		for _, p := range edgePKs {
			for _, sk := range edgeSKs {
				keys = append(keys, map[string]av{"PK": s(p), "SK": s(sk)})
			}
		}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		keys = keys[:want]
		if r.IntN(10) == 0 {
			keys = append(keys[:2], keys[0]) // a duplicate
		}
		_, _ = tee.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{g.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}})
	case k < 51: // BatchWriteItem
		var reqs []types.WriteRequest
		seen := map[string]bool{}
		for range 1 + r.IntN(12) {
			key := g.key()
			id := testenv.CanonItem(key)
			if seen[id] {
				continue
			}
			seen[id] = true
			if r.IntN(3) == 0 {
				reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key}})
			} else {
				reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: g.item(key)}})
			}
		}
		_, _ = tee.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{g.table: reqs}})
	case k < 78: // Query, page by page to the end
		g.query(ctx, tee)
	default: // TransactWriteItems
		g.transact(ctx, tee)
	}
}

func merge[V any](a, b map[string]V) map[string]V {
	if a == nil {
		return b
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

func (g *edgeGen) query(ctx context.Context, tee *testenv.Tee) {
	r := g.rng
	in := &dynamodb.QueryInput{TableName: aws.String(g.table), ScanIndexForward: aws.Bool(r.IntN(2) == 0)}
	pkAttr, skAttr, pk := "PK", "SK", pick(r, edgePKs...)
	lo, hi, pre := pick(r, edgeSKs...), pick(r, edgeSKs...), pick(r, "a", "a#", "b#", "c", "e#", "z", "")
	switch r.IntN(5) {
	case 3: // INCLUDE: the keys and authorId, body, createdAt only
		in.IndexName, pkAttr, skAttr, pk = aws.String("GSI3"), "GSI3PK", "PK", pick(r, "c0#a", "c1#a", "c0#b", "c1#c#1", "c0#g#2")
		lo, hi, pre = pick(r, edgePKs...), pick(r, edgePKs...), pick(r, "p", "p1", "q")
	case 1:
		in.IndexName, pkAttr, skAttr, pk = aws.String("GSI1"), "GSI1PK", "GSI1SK", pick(r, "g0", "g1")
		lo, hi, pre = pick(r, "x", "x#p1", "y#p3/c", "z"), pick(r, "y", "y#p9", "z#p0/b"), pick(r, "x#", "y#p", "w#")
	case 2:
		in.IndexName, pkAttr, skAttr, pk = aws.String("GSI2"), "GSI2PK", "GSI2SK", "h0"
		lo, hi, pre = "DUE#2026", pick(r, "DUE#2027", "DUE#2027~", "DUE#~"), pick(r, "DUE#2", "DUE#~", "DUE#")
	default:
		in.ConsistentRead = aws.Bool(r.IntN(2) == 0)
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	names := map[string]string{"#pk": pkAttr, "#sk": skAttr}
	values := map[string]av{":pk": s(pk)}
	switch r.IntN(8) {
	case 0:
		in.KeyConditionExpression = aws.String("#pk = :pk")
		delete(names, "#sk")
	case 1:
		in.KeyConditionExpression, values[":lo"], values[":hi"] = aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"), s(lo), s(hi)
	case 2:
		if pre == "" {
			pre = "a"
		}
		in.KeyConditionExpression, values[":p"] = aws.String("#pk = :pk AND begins_with(#sk, :p)"), s(pre)
	default:
		op := pick(r, "=", "<", "<=", ">", ">=")
		in.KeyConditionExpression, values[":v"] = aws.String("#pk = :pk AND #sk "+op+" :v"), s(lo)
	}
	if r.IntN(3) == 0 {
		in.FilterExpression = aws.String(pick(r, "v > :f", "attribute_exists(s) AND v <> :f", "s = :fs OR v = :f"))
		values[":f"] = n(2)
		if strings.Contains(*in.FilterExpression, ":fs") {
			values[":fs"] = s("")
		}
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = names, values
	if r.IntN(4) != 0 {
		in.Limit = aws.Int32(int32(1 + r.IntN(6)))
	}
	for pages := 0; pages < 40; pages++ {
		out, err := tee.Query(ctx, in)
		if err != nil || out.LastEvaluatedKey == nil {
			return
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func (g *edgeGen) transact(ctx context.Context, tee *testenv.Tee) {
	r := g.rng
	if g.lastTx != nil && r.IntN(5) == 0 {
		in := g.lastTx
		if r.IntN(2) == 0 { // the same token for another request: refused
			in = &dynamodb.TransactWriteItemsInput{TransactItems: in.TransactItems[:1], ClientRequestToken: in.ClientRequestToken}
			if len(g.lastTx.TransactItems) == 1 {
				in.TransactItems = append(slices.Clone(in.TransactItems), types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
					TableName: aws.String(g.table), Key: map[string]av{"PK": s("p9"), "SK": s("zz")}, ConditionExpression: aws.String("attribute_not_exists(PK)")}})
			}
		}
		_, _ = tee.TransactWriteItems(ctx, in) // the same again: answered, not applied twice
		return
	}
	var items []types.TransactWriteItem
	seen := map[string]bool{}
	for range 1 + r.IntN(6) {
		key := g.key()
		id := testenv.CanonItem(key)
		if seen[id] { // two actions on one item: refused by both, but where a
			continue // condition fails, DynamoDB Local may cancel instead (docs/design.md)
		}
		seen[id] = true
		c, names, values := g.condition()
		ret := pick(r, types.ReturnValuesOnConditionCheckFailureNone, types.ReturnValuesOnConditionCheckFailureAllOld)
		tb := aws.String(g.table)
		switch r.IntN(4) {
		case 0:
			items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: tb, Item: g.item(key), ConditionExpression: c,
				ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: ret}})
		case 1:
			u, un, uv := g.update()
			items = append(items, types.TransactWriteItem{Update: &types.Update{TableName: tb, Key: key, UpdateExpression: aws.String(u),
				ConditionExpression: c, ExpressionAttributeNames: merge(un, names), ExpressionAttributeValues: merge(uv, values),
				ReturnValuesOnConditionCheckFailure: ret}})
		case 2:
			items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: tb, Key: key, ConditionExpression: c,
				ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: ret}})
		default:
			if c == nil {
				c = aws.String("attribute_exists(PK)")
			}
			items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: tb, Key: key, ConditionExpression: c,
				ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: ret}})
		}
	}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: items, ClientRequestToken: aws.String(fmt.Sprintf("%s-%d", g.table, g.n))}
	if _, err := tee.TransactWriteItems(ctx, in); err == nil {
		g.lastTx = in
	}
}
