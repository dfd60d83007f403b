package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// keysOf returns the keys of the items a write call names, in the order
// it names them, each once.
func (j *journal) keysOf(e *Store, op string, body []byte) ([]image, error) {
	type target struct {
		TableName string
		Item, Key map[string]json.RawMessage
	}
	var targets []target
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem":
		var t target
		if err := json.Unmarshal(body, &t); err != nil {
			return nil, err
		}
		targets = append(targets, t)
	case "BatchWriteItem":
		var in struct {
			RequestItems map[string][]struct {
				PutRequest    *struct{ Item map[string]json.RawMessage }
				DeleteRequest *struct{ Key map[string]json.RawMessage }
			}
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, err
		}
		for table, reqs := range in.RequestItems {
			for _, r := range reqs {
				switch {
				case r.PutRequest != nil:
					targets = append(targets, target{TableName: table, Item: r.PutRequest.Item})
				case r.DeleteRequest != nil:
					targets = append(targets, target{TableName: table, Key: r.DeleteRequest.Key})
				}
			}
		}
	case "TransactWriteItems":
		var in struct {
			TransactItems []struct{ Put, Update, Delete *target }
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, err
		}
		for _, it := range in.TransactItems {
			for _, t := range []*target{it.Put, it.Update, it.Delete} {
				if t != nil {
					targets = append(targets, *t)
				}
			}
		}
	default:
		return nil, nil // table calls: the table is made at every start
	}
	var out []image
	seen := map[string]bool{}
	for _, t := range targets {
		key := t.Key
		if key == nil {
			names, err := j.keyNames(e, t.TableName)
			if err != nil {
				return nil, err
			}
			key = map[string]json.RawMessage{}
			for _, n := range names {
				key[n] = t.Item[n]
			}
		}
		id, _ := json.Marshal([]any{t.TableName, key}) // maps marshal sorted: one id per key
		if !seen[string(id)] {
			seen[string(id)] = true
			out = append(out, image{Table: t.TableName, Key: key})
		}
	}
	return out, nil
}

// keyNames returns the key attributes of a table, asked once.
func (j *journal) keyNames(e *Store, table string) ([]string, error) {
	if names, ok := j.keys[table]; ok {
		return names, nil
	}
	out, err := e.call("DescribeTable", map[string]any{"TableName": table})
	if err != nil {
		return nil, err
	}
	var d struct {
		Table struct {
			KeySchema []struct{ AttributeName string }
		}
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, err
	}
	var names []string
	for _, k := range d.Table.KeySchema {
		names = append(names, k.AttributeName)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("table %s has no key schema", table)
	}
	j.keys[table] = names
	return names, nil
}

// call makes one call to minidyn in-process and returns its answer.
func (e *Store) call(op string, in any) ([]byte, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	e.Server.ServeHTTP(rec, req)
	if rec.code != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", op, rec.code, bytes.TrimSpace(rec.body.Bytes()))
	}
	return rec.body.Bytes(), nil
}

// recorder is an http.ResponseWriter that keeps the answer.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.body.Write(p)
}
