package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// write is one item's write in a call: a put, an update, a delete or (in
// a transaction) a condition check, with its condition.
type write struct {
	t       *table
	kind    string // "Put", "Update", "Delete", "ConditionCheck"
	key     ikey
	keyA    attrs // the key as sent (Update: the new item starts from it)
	put     *item
	upd     update
	changed []string // the top-level attributes the update names
	cond    condition
	x       exprs
	retOld  bool   // ReturnValuesOnConditionCheckFailure ALL_OLD
	returns string // ReturnValues

	old  *item // the item before the write (after run)
	next *item // the item after it; nil: none

	// invalid is why DynamoDB cancels a transaction for this write alone
	// (its key too long): its reason's message.
	invalid string
}

// writeInput is what Put, Update, Delete and ConditionCheck are sent,
// alone or in a transaction.
type writeInput struct {
	TableName                           string
	Item                                attrMap
	Key                                 attrMap
	UpdateExpression                    string
	ConditionExpression                 string
	ExpressionAttributeNames            map[string]string
	ExpressionAttributeValues           attrMap
	ReturnValues                        string
	ReturnValuesOnConditionCheckFailure string
}

// prepare checks a write and parses its expressions.
func (e *Engine) prepare(kind string, in *writeInput) (*write, error) {
	t, err := e.table(in.TableName)
	if err != nil {
		return nil, err
	}
	w := &write{t: t, kind: kind, x: exprs{names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues},
		retOld: in.ReturnValuesOnConditionCheckFailure == "ALL_OLD", returns: in.ReturnValues}
	switch in.ReturnValuesOnConditionCheckFailure {
	case "", "NONE", "ALL_OLD":
	default:
		return nil, validation("Invalid ReturnValuesOnConditionCheckFailure: %s", in.ReturnValuesOnConditionCheckFailure)
	}
	ok := map[string]string{"Put": " NONE ALL_OLD ", "Delete": " NONE ALL_OLD ",
		"Update": " NONE ALL_OLD ALL_NEW UPDATED_OLD UPDATED_NEW ", "ConditionCheck": " NONE "}[kind]
	if in.ReturnValues != "" && !strings.Contains(ok, " "+in.ReturnValues+" ") {
		return nil, validation("ReturnValues %s is not valid for %s", in.ReturnValues, kind)
	}
	if err := w.x.check(in.UpdateExpression, in.ConditionExpression); err != nil {
		return nil, err
	}
	label := "ConditionExpression"
	if w.cond, err = parseCondition(label, in.ConditionExpression); err != nil {
		return nil, err
	}
	if kind == "ConditionCheck" && w.cond == nil {
		return nil, validation("The ConditionExpression of a ConditionCheck must be given")
	}
	if kind == "Put" {
		if w.put, err = t.newItem(in.Item); err != nil {
			return nil, err
		}
		if err := w.put.checkIndexKeys(); err != nil {
			return nil, err
		}
		w.key = w.put.key
		return w, nil
	}
	if w.key, err = keyOf(t.key, in.Key, true); err != nil {
		return nil, err
	}
	w.keyA = in.Key
	if kind == "Update" && in.UpdateExpression != "" {
		if w.upd, w.changed, err = parseUpdate(in.UpdateExpression, t.key, w.x.names); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// run evaluates the write on the table as it is: its condition (ok false
// when it fails), then the item it leaves (w.next). It changes nothing.
func (w *write) run() (ok bool, err error) {
	w.old = w.t.get(w.key)
	var old attrs
	if w.old != nil && (w.cond != nil || w.upd != nil) {
		if old, err = w.old.decode(); err != nil {
			return false, err
		}
	}
	if ok, err = w.x.match(w.cond, old); err != nil || !ok {
		return ok, err
	}
	// An update that cannot apply to the item it found is a
	// ValidationException, of a transaction too (as DynamoDB Local
	// answers); one whose condition failed is not tried.
	var updated attrs
	if w.kind == "Update" && w.upd != nil {
		a := old
		if a == nil {
			a = w.keyA
		}
		if updated, err = w.x.apply(w.upd, a); err != nil {
			return false, err
		}
	}
	switch w.kind {
	case "Put":
		w.next = w.put
	case "Update":
		w.next = w.old
		if w.upd == nil && w.old != nil {
			return true, nil
		}
		a := updated
		if a == nil {
			a = w.keyA
		}
		if w.next, err = w.t.newItem(a); err != nil {
			if e, ok := err.(*Error); ok && e.Message == errTooLarge {
				return false, validation("Item size to update has exceeded the maximum allowed size")
			}
			return false, err
		}
	case "Delete":
		w.next = nil
	case "ConditionCheck":
		w.next = w.old
	}
	return true, nil
}

// commit makes the write's change.
func (w *write) commit() {
	switch {
	case w.next == w.old:
	case w.next == nil:
		w.t.remove(w.old)
	default:
		w.t.put(w.old, w.next)
	}
}

// failed is a failed condition's ConditionalCheckFailedException.
func (w *write) failed() error {
	err := &Error{Code: "ConditionalCheckFailedException", Message: "The conditional request failed"}
	if w.retOld && w.old != nil {
		err.Reasons = []Reason{{Item: w.old.raw}}
	}
	return err
}

// answer is a single write's answer, with the attributes ReturnValues asks
// for.
func (w *write) answer() ([]byte, error) {
	var raw []byte
	switch w.returns {
	case "ALL_OLD":
		if w.old != nil {
			raw = w.old.raw
		}
	case "ALL_NEW":
		if w.next != nil {
			raw = w.next.raw
		}
	case "UPDATED_OLD", "UPDATED_NEW":
		var err error
		if raw, err = w.updated(w.returns == "UPDATED_NEW"); err != nil {
			return nil, err
		}
	}
	if raw == nil {
		return []byte(`{}`), nil
	}
	return append(append([]byte(`{"Attributes":`), raw...), '}'), nil
}

// updated is the top-level attributes the update names, as they were
// (UPDATED_OLD) or are (UPDATED_NEW); a nested path's whole attribute.
func (w *write) updated(newer bool) ([]byte, error) {
	it := w.old
	if newer {
		it = w.next
	}
	if it == nil {
		return nil, nil
	}
	a, err := it.decode()
	if err != nil {
		return nil, err
	}
	out := attrs{}
	for _, n := range w.changed {
		if v, ok := a[n]; ok {
			out[n] = v
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return encodeItem(out), nil
}

// one runs a single-item write call.
func (e *Engine) one(kind string, in *writeInput) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w, err := e.prepare(kind, in)
	if err != nil {
		return nil, err
	}
	ok, err := w.run()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, w.failed()
	}
	w.commit()
	return w.answer()
}

type batchWriteItemInput struct {
	RequestItems map[string][]struct {
		PutRequest    *struct{ Item attrMap }
		DeleteRequest *struct{ Key attrMap }
	}
}

func (e *Engine) batchWriteItem(in *batchWriteItemInput) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, reqs := range in.RequestItems {
		n += len(reqs)
	}
	if n == 0 || n > 25 {
		return nil, validation("1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]")
	}
	var writes []*write
	var unprocessed bytes.Buffer
	seen := map[string]bool{}
	for _, name := range sortedKeys(in.RequestItems) {
		var left [][]byte
		for i, r := range in.RequestItems[name] {
			var w *write
			var err error
			var raw attrs
			switch {
			case r.PutRequest != nil && r.DeleteRequest == nil:
				w, err = e.prepare("Put", &writeInput{TableName: name, Item: r.PutRequest.Item})
				raw = r.PutRequest.Item
			case r.DeleteRequest != nil && r.PutRequest == nil:
				w, err = e.prepare("Delete", &writeInput{TableName: name, Key: r.DeleteRequest.Key})
				raw = r.DeleteRequest.Key
			default:
				return nil, validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
			}
			if err != nil {
				return nil, err
			}
			id := name + "\x00" + w.key.hash + "\x00" + w.key.rng
			if seen[id] {
				return nil, validation("Provided list of item keys contains duplicates")
			}
			seen[id] = true
			if e.fail.unprocessed(name, i, raw) {
				req, _ := json.Marshal(map[string]json.RawMessage{map[bool]string{true: "PutRequest", false: "DeleteRequest"}[r.PutRequest != nil]: json.RawMessage(
					`{"` + map[bool]string{true: "Item", false: "Key"}[r.PutRequest != nil] + `":` + string(appendAttrs(nil, raw)) + `}`)})
				left = append(left, req)
				continue
			}
			writes = append(writes, w)
		}
		if len(left) > 0 {
			if unprocessed.Len() > 0 {
				unprocessed.WriteByte(',')
			}
			unprocessed.Write(appendString(nil, name))
			unprocessed.WriteString(":[")
			unprocessed.Write(bytes.Join(left, []byte(",")))
			unprocessed.WriteByte(']')
		}
	}
	for _, w := range writes {
		if _, err := w.run(); err != nil {
			return nil, err
		}
		w.commit()
	}
	return []byte(`{"UnprocessedItems":{` + unprocessed.String() + `}}`), nil
}

type transactWriteItemsInput struct {
	TransactItems []struct {
		ConditionCheck, Put, Update, Delete *writeInput
	}
	ClientRequestToken string
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
	for _, w := range writes {
		w.commit()
	}
	if in.ClientRequestToken != "" {
		e.tokens[in.ClientRequestToken] = token{digest: dg, at: e.now()}
		e.tokenOrder = append(e.tokenOrder, in.ClientRequestToken)
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
