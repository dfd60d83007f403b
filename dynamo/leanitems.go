package dynamo

import (
	"context"
	"errors"
	"maps"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Lean items. A task's item is stored without the id and project id its
// keys hold (PK TASK#<t>, GSI1PK PROJECT#<p>), a comment's without the id
// and task id (PK TASK#<t>, SK COMMENT#<c>): about 70 and 95 bytes fewer
// in every read of them, the items' own or an ALL index's (GSI2). Items
// written before keep them, and read the same.
//
// The store sees every item whole: its client (leanClient, which New puts
// in front of the one it is given) fills what keys hold (inKeys, keys.go)
// into every item that comes back (GetItem, BatchGetItem, Query, Scan, a
// failed condition's old item) where it is missing, and leaves it out of
// every item it puts where it equals what the keys hold. A whole table
// read from a file (PutItems: a dump, a snapshot) is filled in the same
// way. Nothing else in the store knows: decode, the dump, the change log,
// the migrations read id, projectId and taskId as before.

// whole fills in, in place, what a task's or a comment's item holds in its
// keys and leaves out.
func whole(it item) {
	names, values := inKeys(it)
	for i, n := range names {
		if n != "" && it[n] == nil {
			it[n] = &types.AttributeValueMemberS{Value: values[i]}
		}
	}
}

// lean returns it without what its keys hold (a copy when there is any):
// what a task's or a comment's item is stored as.
func lean(it item) item {
	names, values := inKeys(it)
	var out item
	for i, n := range names {
		if v, ok := it[n].(*types.AttributeValueMemberS); n != "" && ok && v.Value == values[i] {
			if out == nil {
				out = make(item, len(it))
				for a, v := range it {
					out[a] = v
				}
			}
			delete(out, n)
		}
	}
	if out == nil {
		return it
	}
	return out
}

// leanClient is the store's client: the one it was given, with its items
// whole as the store sees them and lean as stored once writes may be
// (writesLean: the leanItemsGate marker). It keeps the optional methods
// the store looks for (Scan, UpdateTable) when the client has them
// (newLeanClient).
type leanClient struct {
	API
	writesLean func() bool
}

// leanItemsGate is a backfill that writes nothing: its marker, done on a
// new table (and an import) and by `migrate` on a table that holds data,
// which runs after a rollout (docs/operations.md), says that every
// instance reading the table reads lean items. Until it is done, items
// are put whole, so an instance of a version before lean items, still
// serving during a rolling deployment, reads every item it expects.
var leanItemsGate = backfill{name: "lean-items"}

// stored is what it is stored as: lean once writes may be, else whole.
func (l leanClient) stored(it item) item {
	if l.writesLean == nil || !l.writesLean() {
		return it
	}
	return lean(it)
}

// leanScan is Scan of a leanClient.
type leanScan struct{ sc scanner }

// newLeanClient returns db behind a leanClient, with Scan and UpdateTable
// when db has them; it writes lean items while writesLean says so.
func newLeanClient(db API, writesLean func() bool) API {
	l := leanClient{db, writesLean}
	sc, canScan := db.(scanner)
	up, canUpdate := db.(tableUpdater)
	switch {
	case canScan && canUpdate:
		return struct {
			leanClient
			leanScan
			tableUpdater
		}{l, leanScan{sc}, up}
	case canScan:
		return struct {
			leanClient
			leanScan
		}{l, leanScan{sc}}
	case canUpdate:
		return struct {
			leanClient
			tableUpdater
		}{l, up}
	}
	return l
}

// GetItem reads an item whole.
func (l leanClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := l.API.GetItem(ctx, in, o...)
	if out != nil && out.Item != nil {
		whole(out.Item)
	}
	return out, err
}

// BatchGetItem reads items whole.
func (l leanClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := l.API.BatchGetItem(ctx, in, o...)
	if out != nil {
		for _, items := range out.Responses {
			wholeAll(items)
		}
	}
	return out, err
}

// Query reads items whole.
func (l leanClient) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := l.API.Query(ctx, in, o...)
	if out != nil {
		wholeAll(out.Items)
	}
	return out, err
}

// Scan reads items whole.
func (l leanScan) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	out, err := l.sc.Scan(ctx, in, o...)
	if out != nil {
		wholeAll(out.Items)
	}
	return out, err
}

// PutItem puts an item lean; the old item of a failed condition, or
// returned, comes back whole.
func (l leanClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if it := l.stored(in.Item); len(it) != len(in.Item) {
		c := *in
		c.Item, in = it, &c
	}
	out, err := l.API.PutItem(ctx, in, o...)
	if out != nil && out.Attributes != nil {
		whole(out.Attributes)
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && ccf.Item != nil {
		whole(ccf.Item)
	}
	return out, err
}

// BatchWriteItem puts items lean.
func (l leanClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	var reqs map[string][]types.WriteRequest
	for table, rs := range in.RequestItems {
		var mine []types.WriteRequest
		for i, r := range rs {
			if r.PutRequest == nil {
				continue
			}
			if it := l.stored(r.PutRequest.Item); len(it) != len(r.PutRequest.Item) {
				if mine == nil {
					mine = append([]types.WriteRequest(nil), rs...)
				}
				mine[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
			}
		}
		if mine != nil {
			if reqs == nil {
				reqs = maps.Clone(in.RequestItems)
			}
			reqs[table] = mine
		}
	}
	if reqs != nil {
		c := *in
		c.RequestItems, in = reqs, &c
	}
	return l.API.BatchWriteItem(ctx, in, o...)
}

// TransactWriteItems puts items lean; the old items of a cancelled
// transaction come back whole.
func (l leanClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	var acts []types.TransactWriteItem
	for i, a := range in.TransactItems {
		if a.Put == nil {
			continue
		}
		it := l.stored(a.Put.Item)
		if len(it) == len(a.Put.Item) {
			continue
		}
		if acts == nil {
			acts = append([]types.TransactWriteItem(nil), in.TransactItems...)
		}
		p := *a.Put
		p.Item = it
		acts[i].Put = &p
	}
	if acts != nil {
		c := *in
		c.TransactItems, in = acts, &c
	}
	out, err := l.API.TransactWriteItems(ctx, in, o...)
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if r.Item != nil {
				whole(r.Item)
			}
		}
	}
	return out, err
}

func wholeAll(items []item) {
	for _, it := range items {
		whole(it)
	}
}
