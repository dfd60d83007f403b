package engine

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Server serves an engine as DynamoDB's HTTP JSON protocol (API version
// 2012-08-10): a POST whose X-Amz-Target header names the operation, a
// JSON body, a JSON answer or error. Requests are not authenticated.
type Server struct {
	e *Engine
}

// NewServer returns a server of a new engine with no tables.
func NewServer() *Server { return &Server{e: New()} }

// ServeHTTP answers one DynamoDB call.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	target := r.Header.Get("X-Amz-Target")
	op := target[strings.LastIndexByte(target, '.')+1:]
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, &Error{Code: "SerializationException", Message: "reading the request: " + err.Error()})
		return
	}
	out, err := s.Call(op, body)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("Content-Length", itoa(len(out)))
	_, _ = w.Write(out)
}

// Call runs one call, op with its JSON body, and returns its JSON answer
// or its error (an *Error).
func (s *Server) Call(op string, body []byte) ([]byte, error) {
	decode := func(v any) error {
		if err := json.Unmarshal(body, v); err != nil {
			return &Error{Code: "SerializationException", Message: "the request body is not valid: " + err.Error()}
		}
		return nil
	}
	var (
		out []byte
		err error
	)
	switch op {
	case "GetItem":
		var in getItemInput
		if err = decode(&in); err == nil {
			if err = s.e.fail.check(in.TableName, ""); err == nil {
				out, err = s.e.getItem(&in)
			}
		}
	case "BatchGetItem":
		var in batchGetItemInput
		if err = decode(&in); err == nil {
			if err = s.e.fail.check(sortedKeys(in.RequestItems)...); err == nil {
				out, err = s.e.batchGetItem(&in)
			}
		}
	case "Query", "Scan":
		var in queryInput
		if err = decode(&in); err == nil {
			if err = s.e.fail.checkIndex(in.TableName, in.IndexName); err == nil {
				if op == "Query" {
					out, err = s.e.query(&in)
				} else {
					out, err = s.e.scan(&in)
				}
			}
		}
	case "PutItem", "UpdateItem", "DeleteItem":
		var in writeInput
		if err = decode(&in); err == nil {
			if err = s.e.fail.check(in.TableName); err == nil {
				out, err = s.e.one(strings.TrimSuffix(op, "Item"), &in)
			}
		}
	case "BatchWriteItem":
		var in batchWriteItemInput
		if err = decode(&in); err == nil {
			if err = s.e.fail.check(sortedKeys(in.RequestItems)...); err == nil {
				out, err = s.e.batchWriteItem(&in)
			}
		}
	case "TransactWriteItems":
		var in transactWriteItemsInput
		if err = decode(&in); err == nil {
			var tables []string
			for _, ti := range in.TransactItems {
				for _, w := range []*writeInput{ti.ConditionCheck, ti.Put, ti.Update, ti.Delete} {
					if w != nil {
						tables = append(tables, w.TableName)
					}
				}
			}
			if err = s.e.fail.check(tables...); err == nil {
				out, err = s.e.transactWriteItems(&in)
			}
		}
	case "CreateTable", "UpdateTable", "DescribeTable", "DeleteTable", "ListTables", "UpdateTimeToLive", "DescribeTimeToLive":
		out, err = s.callTable(op, decode)
	default:
		err = &Error{Code: "UnknownOperationException", Message: "the embedded store does not implement " + op}
	}
	return out, err
}

// callTable runs one call on the tables themselves (their definitions).
func (s *Server) callTable(op string, decode func(any) error) ([]byte, error) {
	asJSON := func(v any, err error) ([]byte, error) {
		if err != nil {
			return nil, err
		}
		return json.Marshal(v)
	}
	switch op {
	case "CreateTable":
		var in createTableInput
		if err := decode(&in); err != nil {
			return nil, err
		}
		return asJSON(s.e.createTable(&in))
	case "UpdateTable":
		var in updateTableInput
		if err := decode(&in); err != nil {
			return nil, err
		}
		return asJSON(s.e.updateTable(&in))
	case "DescribeTable", "DeleteTable":
		var in struct{ TableName string }
		if err := decode(&in); err != nil {
			return nil, err
		}
		if err := s.e.fail.check(in.TableName); err != nil {
			return nil, err
		}
		if op == "DescribeTable" {
			return asJSON(s.e.describeTable(in.TableName))
		}
		return asJSON(s.e.deleteTable(in.TableName))
	case "ListTables":
		return asJSON(s.e.listTables())
	}
	return nil, validation("the embedded store has no time to live")
}

// writeError answers an error as DynamoDB does: 400 with the exception's
// name in __type (500 for InternalServerError), with a cancelled
// transaction's reasons and a failed condition's item.
func writeError(w http.ResponseWriter, err error) {
	e, ok := err.(*Error)
	if !ok {
		e = &Error{Code: "InternalServerError", Message: err.Error()}
	}
	b := []byte(`{"__type":"com.amazonaws.dynamodb.v20120810#` + e.Code + `","message":`)
	b = appendString(b, e.Message)
	if e.Code == "TransactionCanceledException" {
		b = append(b, `,"CancellationReasons":[`...)
		for i, r := range e.Reasons {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"Code":`...)
			b = appendString(b, r.Code)
			if r.Message != "" {
				b = append(b, `,"Message":`...)
				b = appendString(b, r.Message)
			}
			if r.Item != nil {
				b = append(append(b, `,"Item":`...), r.Item...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	} else if len(e.Reasons) == 1 && e.Reasons[0].Item != nil {
		b = append(append(b, `,"Item":`...), e.Reasons[0].Item...)
	}
	b = append(b, '}')
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("Content-Length", itoa(len(b)))
	status := http.StatusBadRequest
	if e.Code == "InternalServerError" {
		status = http.StatusInternalServerError
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// failures is the failure emulation of tests: calls that fail with
// InternalServerError, batch requests left unprocessed.
type failures struct {
	mu      sync.Mutex
	all     bool
	scoped  map[string]bool // table + "\x00" + index ("" for the whole table)
	leftOut map[string]func(n int, key map[string]string) bool
}

var errEmulated = &Error{Code: "InternalServerError", Message: "Internal server error (emulated)"}

// check fails a call on the tables when a failure is emulated on them.
func (f *failures) check(tables ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.all {
		return errEmulated
	}
	for _, t := range tables {
		if f.scoped[t+"\x00"] {
			return errEmulated
		}
	}
	return nil
}

// checkIndex fails a read of the table's index when a failure is
// emulated on it or on the whole table.
func (f *failures) checkIndex(table, index string) error {
	if err := f.check(table); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if index != "" && f.scoped[table+"\x00"+index] {
		return errEmulated
	}
	return nil
}

// unprocessed tells whether request n of a batch on table is to be left
// unprocessed; a is the item or key it names.
func (f *failures) unprocessed(table string, n int, a attrs) bool {
	f.mu.Lock()
	match := f.leftOut[table]
	f.mu.Unlock()
	if match == nil {
		return false
	}
	key := map[string]string{}
	for k, v := range a {
		if v.S != nil {
			key[k] = *v.S
		}
	}
	return match(n, key)
}

// EmulateFailure makes every call fail with InternalServerError (500)
// while on is true.
func (s *Server) EmulateFailure(on bool) {
	s.e.fail.mu.Lock()
	defer s.e.fail.mu.Unlock()
	s.e.fail.all = on
}

// EmulateFailureForTable makes the calls on a table fail with
// InternalServerError while on is true; with index, only its reads
// through that index.
func (s *Server) EmulateFailureForTable(table, index string, on bool) {
	s.e.fail.mu.Lock()
	defer s.e.fail.mu.Unlock()
	if s.e.fail.scoped == nil {
		s.e.fail.scoped = map[string]bool{}
	}
	if on {
		s.e.fail.scoped[table+"\x00"+index] = true
	} else {
		delete(s.e.fail.scoped, table+"\x00"+index)
	}
}

// EmulateUnprocessedItems makes BatchGetItem and BatchWriteItem leave the
// requests on table for which match is true unprocessed; match gets the
// request's position in the call and the string attributes of its key
// (or item). A nil match ends it.
func (s *Server) EmulateUnprocessedItems(table string, match func(n int, key map[string]string) bool) {
	s.e.fail.mu.Lock()
	defer s.e.fail.mu.Unlock()
	if s.e.fail.leftOut == nil {
		s.e.fail.leftOut = map[string]func(int, map[string]string) bool{}
	}
	if match == nil {
		delete(s.e.fail.leftOut, table)
	} else {
		s.e.fail.leftOut[table] = match
	}
}
