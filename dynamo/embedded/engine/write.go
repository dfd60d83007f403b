package engine

import "strings"

// PutItem, UpdateItem and DeleteItem, and what every write shares with
// them in a batch or a transaction: its checks, its condition, the item
// it leaves and the values it returns.

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
	ReturnConsumedCapacity              string
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
	out, err := w.answer()
	if err == nil && wantsCapacity(in.ReturnConsumedCapacity) {
		out = withCapacity(out, capacity{w.t.name: w.writeUnits()}, true)
	}
	return out, err
}
