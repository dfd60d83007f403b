package testenv

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// Tee is a DynamoDB client that makes every call on two backends, the
// embedded store (A) and a reference (B, DynamoDB Local), one call at a
// time so that both see the same sequence, compares their answers (items
// and their order, counts, LastEvaluatedKey, error codes, a cancelled
// transaction's reasons) and returns A's. It is the differential test's
// client: whatever drives it, every call the store makes is checked
// against the reference. Consumed capacity is not compared: the embedded
// store reports DynamoDB's bill (graph's TestComputedCapacityPerScreen),
// which DynamoDB Local's figures for transactions do not follow.
type Tee struct {
	A, B *dynamodb.Client
	TB   testing.TB
	// MaxShown bounds the differences reported in full (default 20).
	MaxShown int

	mu    sync.Mutex
	calls map[string]int
	diffs int
	// indexKeys are the key attributes of the indexes of the tables
	// created through the Tee (table/index → hash, range).
	indexKeys sync.Map
}

// NewTee returns a Tee of a and b reporting to tb.
func NewTee(tb testing.TB, a, b *dynamodb.Client) *Tee {
	return &Tee{A: a, B: b, TB: tb, calls: map[string]int{}}
}

// Calls returns how many calls of each operation the Tee compared.
func (t *Tee) Calls() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int{}
	for k, v := range t.calls {
		out[k] = v
	}
	return out
}

// Diffs returns how many calls were answered differently.
func (t *Tee) Diffs() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.diffs
}

// both makes one call on each backend and compares the answers with cmp
// (which returns "" when they agree) and their errors by code.
func both[O any](t *Tee, op string, in any, call func(c *dynamodb.Client) (*O, error), cmp func(a, b *O) string) (*O, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls[op]++
	// Both calls are made whatever happens to the caller's context: a
	// reader that stops waiting for an answer still gets A's.
	a, aerr := call(t.A)
	b, berr := call(t.B)
	var diff string
	switch ac, bc := ErrorCode(aerr), ErrorCode(berr); {
	case ac != bc:
		diff = fmt.Sprintf("error %s, reference %s (%v | %v)", ac, bc, aerr, berr)
	case aerr != nil:
		diff = cancelDiff(aerr, berr)
	default:
		diff = cmp(a, b)
	}
	if diff != "" {
		t.diffs++
		shown := t.MaxShown
		if shown == 0 {
			shown = 20
		}
		if t.diffs <= shown {
			t.TB.Errorf("%s answered differently by the embedded store and DynamoDB Local: %s\ninput: %s", op, diff, showInput(in))
		}
	}
	return a, aerr
}

// ErrorCode is the DynamoDB error code of err ("" for none, "other" for
// an error that is not an API error).
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return "other"
}

// cancelDiff compares the reasons of two cancelled transactions by code.
func cancelDiff(a, b error) string {
	var ta, tb *types.TransactionCanceledException
	if !errors.As(a, &ta) || !errors.As(b, &tb) {
		return ""
	}
	codes := func(t *types.TransactionCanceledException) string {
		var s []string
		for _, r := range t.CancellationReasons {
			s = append(s, aws.ToString(r.Code))
		}
		return strings.Join(s, ",")
	}
	if ca, cb := codes(ta), codes(tb); ca != cb {
		return fmt.Sprintf("cancellation reasons [%s], reference [%s]", ca, cb)
	}
	for i := range ta.CancellationReasons {
		if ia, ib := CanonItem(ta.CancellationReasons[i].Item), CanonItem(tb.CancellationReasons[i].Item); ia != ib {
			return fmt.Sprintf("reason %d's item %s, reference %s", i, ia, ib)
		}
	}
	return ""
}

func showInput(in any) string {
	s := fmt.Sprintf("%+v", in)
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

// Canon is a deterministic text of an attribute value: its type and
// value, sets sorted, maps by key.
func Canon(v types.AttributeValue) string {
	sorted := func(ss []string) string { ss = slices.Clone(ss); slices.Sort(ss); return strings.Join(ss, ",") }
	switch a := v.(type) {
	case nil:
		return "-"
	case *types.AttributeValueMemberS:
		return "S" + strconv.Quote(a.Value)
	case *types.AttributeValueMemberN:
		return "N" + a.Value
	case *types.AttributeValueMemberB:
		return "B" + base64.StdEncoding.EncodeToString(a.Value)
	case *types.AttributeValueMemberBOOL:
		return "BOOL" + strconv.FormatBool(a.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberSS:
		q := make([]string, len(a.Value))
		for i, s := range a.Value {
			q[i] = strconv.Quote(s)
		}
		return "SS[" + sorted(q) + "]"
	case *types.AttributeValueMemberNS:
		return "NS[" + sorted(a.Value) + "]"
	case *types.AttributeValueMemberBS:
		q := make([]string, len(a.Value))
		for i, s := range a.Value {
			q[i] = base64.StdEncoding.EncodeToString(s)
		}
		return "BS[" + sorted(q) + "]"
	case *types.AttributeValueMemberL:
		q := make([]string, len(a.Value))
		for i, s := range a.Value {
			q[i] = Canon(s)
		}
		return "L[" + strings.Join(q, ",") + "]"
	case *types.AttributeValueMemberM:
		return "M" + CanonItem(a.Value)
	}
	return fmt.Sprintf("?%T", v)
}

// CanonItem is a deterministic text of an item (nil: "-").
func CanonItem(m map[string]types.AttributeValue) string {
	if m == nil {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k) + ":" + Canon(m[k]))
	}
	b.WriteByte('}')
	return b.String()
}

func canonItems(items []map[string]types.AttributeValue) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = CanonItem(it)
	}
	return out
}

// sameItems compares lists of items, in order or (ordered false) as sets.
func sameItems(what string, a, b []map[string]types.AttributeValue, ordered bool) string {
	ca, cb := canonItems(a), canonItems(b)
	if !ordered {
		slices.Sort(ca)
		slices.Sort(cb)
	}
	if slices.Equal(ca, cb) {
		return ""
	}
	for i := range min(len(ca), len(cb)) {
		if ca[i] != cb[i] {
			return fmt.Sprintf("%s: %d items, reference %d; item %d is %.400s, reference %.400s", what, len(ca), len(cb), i, ca[i], cb[i])
		}
	}
	return fmt.Sprintf("%s: %d items, reference %d", what, len(ca), len(cb))
}

func sameItem(what string, a, b map[string]types.AttributeValue) string {
	if ca, cb := CanonItem(a), CanonItem(b); ca != cb {
		return fmt.Sprintf("%s %.400s, reference %.400s", what, ca, cb)
	}
	return ""
}

// GetItem implements dynamo.API.
func (t *Tee) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return both(t, "GetItem", in, func(c *dynamodb.Client) (*dynamodb.GetItemOutput, error) {
		return c.GetItem(context.WithoutCancel(ctx), in, o...)
	},
		func(a, b *dynamodb.GetItemOutput) string { return sameItem("item", a.Item, b.Item) })
}

// PutItem implements dynamo.API.
func (t *Tee) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return both(t, "PutItem", in, func(c *dynamodb.Client) (*dynamodb.PutItemOutput, error) {
		return c.PutItem(context.WithoutCancel(ctx), in, o...)
	},
		func(a, b *dynamodb.PutItemOutput) string { return sameItem("attributes", a.Attributes, b.Attributes) })
}

// UpdateItem makes an UpdateItem call on both backends.
func (t *Tee) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return both(t, "UpdateItem", in, func(c *dynamodb.Client) (*dynamodb.UpdateItemOutput, error) {
		return c.UpdateItem(context.WithoutCancel(ctx), in, o...)
	},
		func(a, b *dynamodb.UpdateItemOutput) string {
			return sameItem("attributes", a.Attributes, b.Attributes)
		})
}

// DeleteItem makes a DeleteItem call on both backends.
func (t *Tee) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return both(t, "DeleteItem", in, func(c *dynamodb.Client) (*dynamodb.DeleteItemOutput, error) {
		return c.DeleteItem(context.WithoutCancel(ctx), in, o...)
	},
		func(a, b *dynamodb.DeleteItemOutput) string {
			return sameItem("attributes", a.Attributes, b.Attributes)
		})
}

// BatchGetItem implements dynamo.API: the items each table returned, as
// sets, and the keys left unprocessed, by number (which ones a store
// leaves past 16 MB is its own choice).
func (t *Tee) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return both(t, "BatchGetItem", in, func(c *dynamodb.Client) (*dynamodb.BatchGetItemOutput, error) {
		return c.BatchGetItem(context.WithoutCancel(ctx), in, o...)
	},
		func(a, b *dynamodb.BatchGetItemOutput) string {
			left := func(o *dynamodb.BatchGetItemOutput) int {
				n := 0
				for _, k := range o.UnprocessedKeys {
					n += len(k.Keys)
				}
				return n
			}
			if la, lb := left(a), left(b); la != lb {
				return fmt.Sprintf("%d keys unprocessed, reference %d", la, lb)
			}
			if left(a) > 0 {
				return ""
			}
			for table := range in.RequestItems {
				if d := sameItems("table "+table, a.Responses[table], b.Responses[table], false); d != "" {
					return d
				}
			}
			return ""
		})
}

// BatchWriteItem implements dynamo.API.
func (t *Tee) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return both(t, "BatchWriteItem", in, func(c *dynamodb.Client) (*dynamodb.BatchWriteItemOutput, error) {
		return c.BatchWriteItem(context.WithoutCancel(ctx), in, o...)
	},
		func(a, b *dynamodb.BatchWriteItemOutput) string {
			if la, lb := len(a.UnprocessedItems), len(b.UnprocessedItems); la != lb {
				return fmt.Sprintf("unprocessed items of %d tables, reference %d", la, lb)
			}
			return ""
		})
}

// Query implements dynamo.API: the items in order, Count, ScannedCount
// and LastEvaluatedKey.
func (t *Tee) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return both(t, "Query", in, func(c *dynamodb.Client) (*dynamodb.QueryOutput, error) {
		return c.Query(context.WithoutCancel(ctx), in, o...)
	},
		func(a, b *dynamodb.QueryOutput) string {
			ai, bi := a.Items, b.Items
			if in.IndexName != nil {
				if k, ok := t.indexKeys.Load(aws.ToString(in.TableName) + "/" + aws.ToString(in.IndexName)); ok {
					ai, bi = tiesInOrder(ai, k.([2]string)), tiesInOrder(bi, k.([2]string))
				}
			}
			return samePage(ai, bi, a.Count, b.Count, a.ScannedCount, b.ScannedCount, a.LastEvaluatedKey, b.LastEvaluatedKey, true)
		})
}

// Scan makes a Scan call on both backends: a scan's order is each
// store's own, so a page is compared as a set, and only when it is the
// whole table (no start key, no key after it).
func (t *Tee) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return both(t, "Scan", in, func(c *dynamodb.Client) (*dynamodb.ScanOutput, error) {
		return c.Scan(context.WithoutCancel(ctx), in, o...)
	},
		func(a, b *dynamodb.ScanOutput) string {
			if in.ExclusiveStartKey != nil || a.LastEvaluatedKey != nil || b.LastEvaluatedKey != nil {
				return ""
			}
			return samePage(a.Items, b.Items, a.Count, b.Count, a.ScannedCount, b.ScannedCount, nil, nil, false)
		})
}

func samePage(a, b []map[string]types.AttributeValue, ca, cb, sa, sb int32, la, lb map[string]types.AttributeValue, ordered bool) string {
	if d := sameItems("items", a, b, ordered); d != "" {
		return d
	}
	if ca != cb || sa != sb {
		return fmt.Sprintf("Count %d ScannedCount %d, reference %d and %d", ca, sa, cb, sb)
	}
	return sameItem("LastEvaluatedKey", la, lb)
}

// TransactWriteItems implements dynamo.API.
func (t *Tee) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return both(t, "TransactWriteItems", in, func(c *dynamodb.Client) (*dynamodb.TransactWriteItemsOutput, error) {
		return c.TransactWriteItems(context.WithoutCancel(ctx), in, o...)
	}, func(a, b *dynamodb.TransactWriteItemsOutput) string { return "" })
}

// DescribeTable implements dynamo.API (error codes compared).
func (t *Tee) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, o ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return both(t, "DescribeTable", in, func(c *dynamodb.Client) (*dynamodb.DescribeTableOutput, error) {
		return c.DescribeTable(context.WithoutCancel(ctx), in, o...)
	},
		func(a, b *dynamodb.DescribeTableOutput) string { return "" })
}

// CreateTable implements dynamo.API (error codes compared).
func (t *Tee) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, o ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	t.noteIndexKeys(in)
	return both(t, "CreateTable", in, func(c *dynamodb.Client) (*dynamodb.CreateTableOutput, error) {
		return c.CreateTable(context.WithoutCancel(ctx), in, o...)
	},
		func(a, b *dynamodb.CreateTableOutput) string { return "" })
}

// UpdateTimeToLive implements dynamo.API: the embedded store has none, so
// it is asked of A only.
func (t *Tee) UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	return t.A.UpdateTimeToLive(ctx, in, o...)
}
