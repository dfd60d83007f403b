package engine

import (
	"bytes"
	"encoding/json"
)

// BatchWriteItem: up to 25 puts and deletes on one or more tables, each
// unconditional, no key twice, the requests left unprocessed answered as
// the call's retry sends them.

type batchWriteItemInput struct {
	RequestItems map[string][]struct {
		PutRequest    *struct{ Item attrMap }
		DeleteRequest *struct{ Key attrMap }
	}
	ReturnConsumedCapacity string
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
	used := capacity{}
	for _, w := range writes {
		if _, err := w.run(); err != nil {
			return nil, err
		}
		used[w.t.name] += w.writeUnits()
		w.commit()
	}
	out := []byte(`{"UnprocessedItems":{` + unprocessed.String() + `}}`)
	if wantsCapacity(in.ReturnConsumedCapacity) && len(used) > 0 {
		out = withCapacity(out, used, false)
	}
	return out, nil
}
