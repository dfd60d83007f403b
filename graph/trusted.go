package graph

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
)

// Codes of requests refused by the trusted-documents allow-list.
const (
	// CodePersistedQueryNotFound: a documentId (or an automatic persisted
	// query's hash sent without its text) that the manifest does not hold.
	CodePersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"
	// CodeTrustedDocumentRequired: in production, a query text that is not
	// one of the manifest's documents.
	CodeTrustedDocumentRequired = "TRUSTED_DOCUMENT_REQUIRED"
)

// TrustedDocuments is an allow-list of GraphQL documents, keyed by the
// sha256 of their text: the operations the project's own clients were built
// with (the persisted-documents manifest graphql-codegen writes).
type TrustedDocuments struct {
	byHash map[string]string // lower-case hex sha256 -> document
}

// LoadTrustedDocuments reads a manifest file: graphql-codegen's
// persisted-documents.json ({"sha256:<hex>": "<document>"}, bare hex keys
// accepted too) or Apollo's persisted query manifest
// ({"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id","body",…}]}).
// Every key must be the sha256 of its document; errors name the file.
func LoadTrustedDocuments(path string) (*TrustedDocuments, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trusted documents: %w", err)
	}
	t, err := ParseTrustedDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("trusted documents %s: %w", path, err)
	}
	return t, nil
}

// ParseTrustedDocuments parses a manifest (see LoadTrustedDocuments).
func ParseTrustedDocuments(data []byte) (*TrustedDocuments, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, errors.New("not a JSON object of documents by hash")
	}
	t := &TrustedDocuments{byHash: map[string]string{}}
	add := func(key, doc string) error {
		hash, ok := hashKey(key)
		if !ok {
			return fmt.Errorf("key %q is neither sha256:<64 hex digits> nor 64 hex digits", key)
		}
		if sum := sha256.Sum256([]byte(doc)); hex.EncodeToString(sum[:]) != hash {
			return fmt.Errorf("key %q is not the sha256 of its document", key)
		}
		t.byHash[hash] = doc
		return nil
	}
	if format, ok := raw["format"]; ok {
		var m struct {
			Format     string `json:"format"`
			Version    int    `json:"version"`
			Operations []struct {
				ID   string `json:"id"`
				Body string `json:"body"`
			} `json:"operations"`
		}
		if err := json.Unmarshal(data, &m); err != nil || m.Format != "apollo-persisted-query-manifest" || m.Version != 1 {
			return nil, fmt.Errorf("format %s is not apollo-persisted-query-manifest version 1", format)
		}
		for _, op := range m.Operations {
			if err := add(op.ID, op.Body); err != nil {
				return nil, err
			}
		}
	} else {
		keys := make([]string, 0, len(raw))
		for k := range raw {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the first bad key named is always the same
		for _, k := range keys {
			var doc string
			if err := json.Unmarshal(raw[k], &doc); err != nil {
				return nil, fmt.Errorf("the document of key %q is not a string", k)
			}
			if err := add(k, doc); err != nil {
				return nil, err
			}
		}
	}
	if len(t.byHash) == 0 {
		return nil, errors.New("holds no documents")
	}
	return t, nil
}

// hashKey returns the lower-case hex digest of a manifest key or a
// documentId: "sha256:<hex>" or bare hex.
func hashKey(key string) (string, bool) {
	h := strings.ToLower(strings.TrimPrefix(key, "sha256:"))
	if len(h) != sha256.Size*2 {
		return "", false
	}
	if _, err := hex.DecodeString(h); err != nil {
		return "", false
	}
	return h, true
}

// Len is the number of documents.
func (t *TrustedDocuments) Len() int { return len(t.byHash) }

// lookup returns the document of a documentId or hash.
func (t *TrustedDocuments) lookup(id string) (string, bool) {
	h, ok := hashKey(id)
	if !ok {
		return "", false
	}
	doc, ok := t.byHash[h]
	return doc, ok
}

// trusted reports whether a query text is one of the documents.
func (t *TrustedDocuments) trusted(query string) bool {
	sum := sha256.Sum256([]byte(query))
	_, ok := t.byHash[hex.EncodeToString(sum[:])]
	return ok
}

// trustedParams are gqlgen's POST request parameters (graphql.RawParams,
// decoded the same way) plus documentId, which gqlgen does not know.
type trustedParams struct {
	Query         string          `json:"query"`
	OperationName string          `json:"operationName,omitempty"`
	Variables     json.RawMessage `json:"variables,omitempty"`
	Extensions    json.RawMessage `json:"extensions,omitempty"`
	Headers       json.RawMessage `json:"headers,omitempty"`
	DocumentID    string          `json:"documentId,omitempty"`
}

// Middleware maps a request's documentId (the GraphQL-over-HTTP
// persisted-documents form), or an automatic persisted query's hash sent
// without its text, to the document's text before gqlgen sees the request;
// an id the manifest lacks is refused with PERSISTED_QUERY_NOT_FOUND. With
// enforce (production) a query text that is not one of the documents is
// refused with TRUSTED_DOCUMENT_REQUIRED before it is parsed. Refusals are
// HTTP 400 with a GraphQL error body, like the server's other refusals of a
// request that is not run at all. gqlgen receives the body re-encoded from
// exactly the parameters checked here. next must get bodies already bounded
// in size (badRequest).
func (t *TrustedDocuments) Middleware(enforce bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			refuse(w, CodeBadRequest, "the request body could not be read")
			return
		}
		var p trustedParams
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&p); err != nil {
			refuse(w, CodeBadRequest, "the request body must be one JSON object of GraphQL request parameters")
			return
		}
		if _, err := dec.Token(); err != io.EOF {
			refuse(w, CodeBadRequest, "the request body must be one JSON object of GraphQL request parameters")
			return
		}
		var ext struct {
			PersistedQuery *struct {
				Sha256Hash string `json:"sha256Hash"`
			} `json:"persistedQuery"`
		}
		_ = json.Unmarshal(p.Extensions, &ext) // gqlgen refuses extensions that are no object
		switch {
		case p.DocumentID != "":
			if p.Query != "" {
				refuse(w, CodeBadRequest, "send either query or documentId, not both")
				return
			}
			doc, ok := t.lookup(p.DocumentID)
			if !ok {
				refuse(w, CodePersistedQueryNotFound, "no trusted document has this documentId")
				return
			}
			p.Query, p.DocumentID = doc, ""
		case p.Query == "" && ext.PersistedQuery != nil && ext.PersistedQuery.Sha256Hash != "":
			doc, ok := t.lookup(ext.PersistedQuery.Sha256Hash)
			if !ok {
				refuse(w, CodePersistedQueryNotFound, "no trusted document has this hash")
				return
			}
			p.Query = doc
		case enforce && p.Query != "" && !t.trusted(p.Query):
			refuse(w, CodeTrustedDocumentRequired, "this server runs only its trusted documents: send a documentId from its manifest")
			return
		}
		out, err := json.Marshal(p)
		if err != nil {
			refuse(w, CodeBadRequest, "the request body must be one JSON object of GraphQL request parameters")
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(out)), int64(len(out))
		next.ServeHTTP(w, r)
	})
}

// refuse answers 400 with one coded GraphQL error.
func refuse(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"message": msg,
		"extensions": map[string]any{"code": code}}}})
}
