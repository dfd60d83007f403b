package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/taskgraph/taskgraph/graph/pipeline"
)

// liftDocumentID returns the GraphQL request parameters in params (one JSON
// object, the body of a POST or the payload of a WebSocket subscribe) with
// documentId, when present, moved to extensions.documentId, where the
// pipeline's trusted-documents step finds it. Keys match as gqlgen's
// decoding matches them, without regard to case. Params that are not one
// JSON object, or whose documentId or extensions have the wrong type, are
// an error.
func liftDocumentID(params []byte) ([]byte, error) {
	if plainParams(params) {
		return params, nil // what liftDecoded returns for them, without decoding
	}
	return liftDecoded(params)
}

// plainParams reports whether params is one JSON object that has no
// documentId key, as far as a look at its bytes tells (liftDecoded then
// returns it as it is): no byte string that spells documentid in any case,
// and no \u escape that could spell one.
func plainParams(params []byte) bool {
	t := bytes.TrimLeft(params, " \t\r\n")
	if len(t) == 0 || t[0] != '{' || bytes.Contains(params, []byte(`\u`)) || !json.Valid(params) {
		return false
	}
	const key = "documentid"
	for i := 0; i+len(key) <= len(params); i++ {
		if asciiFold(params[i:i+len(key)], key) {
			return false
		}
	}
	return true
}

// asciiFold reports whether b is lower, a word of lower-case ASCII
// letters, in any case.
func asciiFold(b []byte, lower string) bool {
	for i := range len(lower) {
		if b[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// liftDecoded is liftDocumentID by decoding params.
func liftDecoded(params []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, errNotParams
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotParams
	}
	var idKey string
	for k := range raw {
		if strings.EqualFold(k, pipeline.DocumentIDExtension) {
			idKey = k
		}
	}
	if idKey == "" {
		return params, nil
	}
	id := raw[idKey]
	delete(raw, idKey)
	ext := map[string]json.RawMessage{}
	for k, v := range raw {
		if strings.EqualFold(k, "extensions") {
			if string(v) != "null" {
				if err := json.Unmarshal(v, &ext); err != nil || ext == nil {
					return nil, errNotParams
				}
			}
			delete(raw, k)
		}
	}
	ext[pipeline.DocumentIDExtension] = id
	b, err := json.Marshal(ext)
	if err != nil {
		return nil, errNotParams
	}
	raw["extensions"] = b
	return json.Marshal(raw)
}

// errNotParams refuses a body or payload that is not one JSON object of
// GraphQL request parameters.
var errNotParams = errors.New("the request must be one JSON object of GraphQL request parameters")
