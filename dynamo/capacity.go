package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Consumed capacity: every call of a client made with the Capacity option
// asks DynamoDB for the capacity it consumed (ReturnConsumedCapacity TOTAL,
// set in one place, so that no call site can forget it), adds what it gets
// back to the Calls of the call's context, and tells the context's
// CallObserver, if any, about the call.

// AddCapacity adds read and write capacity units to the counts.
func (c *Calls) AddCapacity(read, write float64) {
	c.mu.Lock()
	c.rcu += read
	c.wcu += write
	c.mu.Unlock()
}

// Capacity returns the read and write capacity units the calls consumed, as
// DynamoDB reported them (zero where a store reports none: the embedded
// store never does).
func (c *Calls) Capacity() (read, write float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rcu, c.wcu
}

// CallInfo describes one DynamoDB call once it has ended, its retries
// included.
type CallInfo struct {
	Operation  string    // "Query", "BatchGetItem"…
	Table      string    // the (first) table it named
	Index      string    // the index a Query or Scan read; "" for the table
	Start, End time.Time // the first attempt's start, the last one's end
	Attempts   int       // 1 + the SDK's retries
	Throttles  int       // attempts refused by throttling
	// ReadUnits and WriteUnits are the consumed capacity DynamoDB reported.
	ReadUnits, WriteUnits float64
	// Unprocessed is the keys (BatchGetItem) or items (BatchWriteItem) the
	// call handed back unprocessed; the store sends them again.
	Unprocessed int
	Err         error
}

// A CallObserver is told about every DynamoDB call made with a context that
// carries it (WithCallObserver), by a client made with the Capacity option.
// It runs on the caller's goroutine, after the call: it must be quick.
type CallObserver interface {
	ObserveCall(ctx context.Context, c *CallInfo)
}

type observerKey struct{}

// WithCallObserver returns a context whose DynamoDB calls o observes.
func WithCallObserver(ctx context.Context, o CallObserver) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// Capacity is a client option: ReturnConsumedCapacity TOTAL on every call
// whose input has the field (RequestCapacity), the consumed units added to
// the Calls of the call's context (WithCalls), and the call described to the
// context's CallObserver (WithCallObserver). Without an observer it costs a
// context lookup and a type switch per call.
func Capacity(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("taskgraphCapacity", capacityMiddleware), middleware.After)
	})
}

func capacityMiddleware(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	RequestCapacity(in.Parameters)
	obs, _ := ctx.Value(observerKey{}).(CallObserver)
	var start time.Time
	if obs != nil {
		start = time.Now()
	}
	out, md, err := next.HandleInitialize(ctx, in)
	op := awsmiddleware.GetOperationName(ctx)
	read, write := ConsumedUnits(op, out.Result)
	if c := CallsFrom(ctx); c != nil && read+write > 0 {
		c.AddCapacity(read, write)
	}
	if obs != nil {
		ci := &CallInfo{Operation: op, Start: start, End: time.Now(), ReadUnits: read, WriteUnits: write,
			Attempts: 1, Unprocessed: unprocessed(out.Result), Err: err}
		ci.Table, ci.Index = target(in.Parameters)
		if ar, ok := retry.GetAttemptResults(md); ok && len(ar.Results) > 0 {
			ci.Attempts = len(ar.Results)
			for _, r := range ar.Results {
				if r.Err != nil && retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(r.Err) == aws.TrueTernary {
					ci.Throttles++
				}
			}
		}
		obs.ObserveCall(ctx, ci)
	}
	return out, md, err
}

// RequestCapacity sets ReturnConsumedCapacity to TOTAL on a DynamoDB input
// that has the field and leaves it unset, and reports whether the input has
// the field. The client's Capacity option calls it on every input.
func RequestCapacity(params any) bool {
	const total = types.ReturnConsumedCapacityTotal
	var f *types.ReturnConsumedCapacity
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.BatchGetItemInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.QueryInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.ScanInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.PutItemInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.UpdateItemInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.DeleteItemInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.BatchWriteItemInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.TransactGetItemsInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.TransactWriteItemsInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.ExecuteStatementInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.BatchExecuteStatementInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.ExecuteTransactionInput:
		f = &in.ReturnConsumedCapacity
	case *dynamodb.SearchVectorsInput: // not called by the store; its capacity is of another kind
		f = &in.ReturnConsumedCapacity
	default:
		return false
	}
	if *f == "" {
		*f = total
	}
	return true
}

// readOps are the operations whose capacity is read capacity when DynamoDB
// reports it only as CapacityUnits (as it does for TOTAL).
var readOps = map[string]bool{"GetItem": true, "BatchGetItem": true, "Query": true, "Scan": true,
	"TransactGetItems": true}

// ConsumedUnits returns the read and write capacity units a DynamoDB output
// reports: its ReadCapacityUnits and WriteCapacityUnits where DynamoDB split
// them, else its CapacityUnits, read units for a read operation (op) and
// write units for any other.
func ConsumedUnits(op string, result any) (read, write float64) {
	add := func(c *types.ConsumedCapacity) {
		if c == nil {
			return
		}
		r, w := deref(c.ReadCapacityUnits), deref(c.WriteCapacityUnits)
		switch {
		case r != 0 || w != 0:
			read, write = read+r, write+w
		case readOps[op]:
			read += deref(c.CapacityUnits)
		default:
			write += deref(c.CapacityUnits)
		}
	}
	var list []types.ConsumedCapacity
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		add(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		add(out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		add(out.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		add(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		add(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		add(out.ConsumedCapacity)
	case *dynamodb.ExecuteStatementOutput:
		add(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		list = out.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		list = out.ConsumedCapacity
	case *dynamodb.TransactGetItemsOutput:
		list = out.ConsumedCapacity
	case *dynamodb.TransactWriteItemsOutput:
		list = out.ConsumedCapacity
	case *dynamodb.BatchExecuteStatementOutput:
		list = out.ConsumedCapacity
	case *dynamodb.ExecuteTransactionOutput:
		list = out.ConsumedCapacity
	}
	for i := range list {
		add(&list[i])
	}
	return read, write
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// unprocessed counts the keys or items a batch call handed back.
func unprocessed(result any) int {
	n := 0
	switch out := result.(type) {
	case *dynamodb.BatchGetItemOutput:
		for _, ka := range out.UnprocessedKeys {
			n += len(ka.Keys)
		}
	case *dynamodb.BatchWriteItemOutput:
		for _, reqs := range out.UnprocessedItems {
			n += len(reqs)
		}
	}
	return n
}

// target returns the table and index an input names (for a batch: its
// first table, of which the store has one).
func target(params any) (table, index string) {
	first := func(m map[string]types.KeysAndAttributes) string {
		for t := range m {
			return t
		}
		return ""
	}
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		return deref2(in.TableName), ""
	case *dynamodb.QueryInput:
		return deref2(in.TableName), deref2(in.IndexName)
	case *dynamodb.ScanInput:
		return deref2(in.TableName), deref2(in.IndexName)
	case *dynamodb.PutItemInput:
		return deref2(in.TableName), ""
	case *dynamodb.UpdateItemInput:
		return deref2(in.TableName), ""
	case *dynamodb.DeleteItemInput:
		return deref2(in.TableName), ""
	case *dynamodb.DescribeTableInput:
		return deref2(in.TableName), ""
	case *dynamodb.BatchGetItemInput:
		return first(in.RequestItems), ""
	case *dynamodb.BatchWriteItemInput:
		for t := range in.RequestItems {
			return t, ""
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				return deref2(it.Put.TableName), ""
			case it.Update != nil:
				return deref2(it.Update.TableName), ""
			case it.Delete != nil:
				return deref2(it.Delete.TableName), ""
			case it.ConditionCheck != nil:
				return deref2(it.ConditionCheck.TableName), ""
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, it := range in.TransactItems {
			if it.Get != nil {
				return deref2(it.Get.TableName), ""
			}
		}
	}
	return "", ""
}

func deref2(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
