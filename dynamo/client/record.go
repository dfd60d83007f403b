package client

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

// Every call of a client made with the Record option is described once, when
// it has ended (its retries included), in a Call, and that record is handed
// to each Observer of the call's context: the per-operation counter (Calls),
// metrics and spans (internal/telemetry). Record also asks DynamoDB for the
// capacity each call consumed (ReturnConsumedCapacity TOTAL, set in this one
// place so that no call site can forget it). Observers read the record;
// none of them adds a middleware of its own.

// Call describes one DynamoDB call once it has ended, its retries included.
type Call struct {
	Operation  string    // "Query", "BatchGetItem"…
	Table      string    // the (first) table it named
	Index      string    // the index a Query or Scan read; "" for the table
	Start, End time.Time // the first attempt's start, the last one's end
	Attempts   int       // 1 + the SDK's retries
	Throttles  int       // attempts refused by throttling
	// ReadUnits and WriteUnits are the consumed capacity DynamoDB reported
	// (the embedded store's by DynamoDB's rules; zero where a store reports
	// none).
	ReadUnits, WriteUnits float64
	// Unprocessed is the keys (BatchGetItem) or items (BatchWriteItem) the
	// call handed back unprocessed; the store sends them again.
	Unprocessed int
	Err         error
}

// An Observer is told about every DynamoDB call made with a context that
// carries it (WithObserver), by a client made with the Record option. It
// runs on the caller's goroutine, after the call, and must be quick; it
// must not keep the *Call.
type Observer interface {
	ObserveCall(ctx context.Context, c *Call)
}

type observersKey struct{}

// WithObserver returns a context whose DynamoDB calls o observes, besides
// the observers ctx already has.
func WithObserver(ctx context.Context, o Observer) context.Context {
	old := observers(ctx)
	list := make([]Observer, len(old), len(old)+1)
	copy(list, old)
	return context.WithValue(ctx, observersKey{}, append(list, o))
}

func observers(ctx context.Context) []Observer {
	list, _ := ctx.Value(observersKey{}).([]Observer)
	return list
}

// Record is a client option, the one middleware of call accounting: it sets
// ReturnConsumedCapacity TOTAL on every input that has the field
// (RequestCapacity) and, when the call's context has observers, describes
// the ended call in a Call and hands it to each. Without observers it costs
// a context lookup and a type switch per call.
// A client given Record more than once (Calls.Option brings it too) records
// each call once.
func Record(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, addRecord) }

func addRecord(s *middleware.Stack) error {
	if _, ok := s.Initialize.Get(recordID); ok {
		return nil
	}
	return s.Initialize.Add(middleware.InitializeMiddlewareFunc(recordID, record), middleware.After)
}

const recordID = "taskgraphRecord"

func record(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	RequestCapacity(in.Parameters)
	obs := observers(ctx)
	if len(obs) == 0 {
		return next.HandleInitialize(ctx, in)
	}
	c := Call{Start: time.Now(), Attempts: 1}
	out, md, err := next.HandleInitialize(ctx, in)
	c.End, c.Err = time.Now(), err
	c.Operation = awsmiddleware.GetOperationName(ctx)
	c.ReadUnits, c.WriteUnits = ConsumedUnits(c.Operation, out.Result)
	c.Unprocessed = unprocessed(out.Result)
	c.Table, c.Index = target(in.Parameters)
	if ar, ok := retry.GetAttemptResults(md); ok && len(ar.Results) > 0 {
		c.Attempts = len(ar.Results)
		for _, r := range ar.Results {
			if r.Err != nil && retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(r.Err) == aws.TrueTernary {
				c.Throttles++
			}
		}
	}
	for _, o := range obs {
		o.ObserveCall(ctx, &c)
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
