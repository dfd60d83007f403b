package engine

// DynamoDB's limits of sizes, as DynamoDB Local enforces and words them:
// an item's, a key's, a transaction's payload.

// maxItemSize is DynamoDB's largest item, in its own count of bytes.
const maxItemSize = 400 * 1024

// errTooLarge is DynamoDB's refusal of an item past maxItemSize.
const errTooLarge = "Item size has exceeded the maximum allowed size"

// DynamoDB's largest key values, in bytes: a partition key's, a sort key's.
const (
	maxHashKey  = 2048
	maxRangeKey = 1024
)

// errKeyTooLong is DynamoDB's answer to a table key past its size (a
// cancellation reason of its own in a transaction: keyTooLong).
func errKeyTooLong() *Error {
	return validation("Hash primary key values must be under 2048 bytes, and range primary key values must be under 1024 bytes")
}

// keyTooLong reports whether err is errKeyTooLong's.
func keyTooLong(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Code == "ValidationException" && e.Message == errKeyTooLong().Message
}

// checkIndexKeys refuses an item put whose keys in an index are past
// DynamoDB's sizes, as DynamoDB Local does (an update that makes them so
// it lets pass).
func (it *item) checkIndexKeys() error {
	for _, k := range it.ix {
		if k.ok && (len(k.hash) > maxHashKey || len(k.rng) > maxRangeKey) {
			return validation("One or more parameter values were invalid: Size limit exceeded")
		}
	}
	return nil
}

// maxTxnPayload is the most a transaction's request may carry: its puts'
// items and its updates' values (as DynamoDB Local counts them).
const maxTxnPayload = 4 * 1024 * 1024

// size is what the write adds to its transaction's payload.
func (w *write) size(in *writeInput) int {
	switch w.kind {
	case "Put":
		return itemSize(attrs(in.Item))
	case "Update":
		return itemSize(attrs(in.ExpressionAttributeValues))
	}
	return 0
}

// updateTooLarge reports whether err is an update's refusal of the item it
// would make (a cancellation reason of its own in a transaction).
func updateTooLarge(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Code == "ValidationException" && e.Message == "Item size to update has exceeded the maximum allowed size"
}
