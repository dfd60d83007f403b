package engine

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// TransactWriteItems: up to 100 writes and condition checks on distinct
// items, all or none, with the reasons of a cancellation and the client
// request tokens that make a retried transaction idempotent.

type transactWriteItemsInput struct {
	TransactItems []struct {
		ConditionCheck, Put, Update, Delete *writeInput
	}
	ClientRequestToken     string
	ReturnConsumedCapacity string
}

// token is a committed transaction's client request token: what it was
// sent, and when.
type token struct {
	digest [32]byte
	at     time.Time
}

// tokenLife is how long DynamoDB keeps a client request token.
const tokenLife = 10 * time.Minute

func (e *Engine) transactWriteItems(in *transactWriteItemsInput) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(in.TransactItems); n == 0 || n > 100 {
		return nil, validation("1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")
	}
	writes, err := e.prepareTransaction(in)
	if err != nil {
		return nil, err
	}
	var dg [32]byte
	if in.ClientRequestToken != "" {
		if digest, err := e.digest(in); err != nil {
			return nil, err
		} else {
			dg = digest
		}
		now := e.now()
		e.expireTokens(now)
		if tk, ok := e.tokens[in.ClientRequestToken]; ok {
			if tk.digest != dg {
				return nil, &Error{Code: "IdempotentParameterMismatchException", Message: "The request uses the same client token as a previous, but non-identical request."}
			}
			return []byte(`{}`), nil
		}
	}
	reasons := make([]Reason, len(writes))
	cancelled := false
	for i, w := range writes {
		reasons[i] = Reason{Code: "None"}
		if w.invalid != "" {
			reasons[i], cancelled = Reason{Code: "ValidationError", Message: w.invalid}, true
			continue
		}
		ok, err := w.run()
		switch {
		case updateTooLarge(err):
			reasons[i], cancelled = Reason{Code: "ValidationError", Message: err.(*Error).Message}, true
		case err != nil:
			return nil, err
		case !ok:
			reasons[i] = Reason{Code: "ConditionalCheckFailed", Message: "The conditional request failed"}
			if w.retOld && w.old != nil {
				reasons[i].Item = w.old.raw
			}
			cancelled = true
		}
	}
	if cancelled {
		codes := make([]string, len(reasons))
		for i, r := range reasons {
			codes[i] = r.Code
		}
		return nil, &Error{Code: "TransactionCanceledException", Reasons: reasons,
			Message: fmt.Sprintf("Transaction cancelled, please refer cancellation reasons for specific reasons [%s]", strings.Join(codes, ", "))}
	}
	used := capacity{}
	for _, w := range writes {
		used[w.t.name] += 2 * w.writeUnits()
		w.commit()
	}
	if in.ClientRequestToken != "" {
		e.tokens[in.ClientRequestToken] = token{digest: dg, at: e.now()}
		e.tokenOrder = append(e.tokenOrder, in.ClientRequestToken)
	}
	if wantsCapacity(in.ReturnConsumedCapacity) {
		return withCapacity([]byte(`{}`), used, false), nil
	}
	return []byte(`{}`), nil
}

// digest identifies a transaction's request by what it asks, whatever
// the order of the JSON's keys.
func (e *Engine) digest(in *transactWriteItemsInput) ([32]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// expireTokens forgets the tokens older than tokenLife, oldest first.
func (e *Engine) expireTokens(now time.Time) {
	for len(e.tokenOrder) > 0 {
		tk, ok := e.tokens[e.tokenOrder[0]]
		if ok && now.Sub(tk.at) < tokenLife {
			return
		}
		if ok {
			delete(e.tokens, e.tokenOrder[0])
		}
		e.tokenOrder = e.tokenOrder[1:]
	}
}

// prepareTransaction checks a transaction's items and prepares their
// writes: one operation each, none twice on one item, the payload within
// DynamoDB's 4 MB. A write whose key is too long gets a reason of its own
// (as DynamoDB Local cancels it) rather than failing the request.
func (e *Engine) prepareTransaction(in *transactWriteItemsInput) ([]*write, error) {
	var writes []*write
	seen := map[string]bool{}
	payload := 0
	for _, ti := range in.TransactItems {
		var kind string
		var wi *writeInput
		n := 0
		for k, v := range map[string]*writeInput{"ConditionCheck": ti.ConditionCheck, "Put": ti.Put, "Update": ti.Update, "Delete": ti.Delete} {
			if v != nil {
				kind, wi = k, v
				n++
			}
		}
		if n != 1 {
			return nil, validation("TransactItems can only contain one of Check, Put, Update or Delete")
		}
		if wi.ReturnValues != "" {
			return nil, validation("ReturnValues is not supported in a transaction")
		}
		w, err := e.prepare(kind, wi)
		if keyTooLong(err) { // a reason of its own, as DynamoDB Local gives
			writes = append(writes, &write{invalid: err.(*Error).Message})
			continue
		}
		if err != nil {
			return nil, err
		}
		if payload += w.size(wi); payload > maxTxnPayload {
			return nil, validation("Transaction payload size cannot exceed 4MB. Payload Size: %d", payload)
		}
		id := wi.TableName + "\x00" + w.key.hash + "\x00" + w.key.rng
		if seen[id] {
			return nil, validation("Transaction request cannot include multiple operations on one item")
		}
		seen[id] = true
		writes = append(writes, w)
	}
	return writes, nil
}
