package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/vektah/gqlparser/v2/gqlerror"
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

// trustedDocuments is the pipeline's step of the allow-list: it maps an
// operation's documentId (the GraphQL-over-HTTP persisted-documents form,
// which the transports put in extensions.documentId: web's liftDocumentID), or
// an automatic persisted query's hash sent without its text, to the
// document's text before it is parsed; an id the manifest lacks is refused
// with PERSISTED_QUERY_NOT_FOUND. With enforce (production) a query text
// that is not one of the documents is refused with
// TRUSTED_DOCUMENT_REQUIRED before it is parsed. It runs for every
// transport; over HTTP a refusal is a 400.
type trustedDocuments struct {
	docs    *TrustedDocuments
	enforce bool
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = trustedDocuments{}

func (trustedDocuments) ExtensionName() string                   { return "TrustedDocuments" }
func (trustedDocuments) Validate(graphql.ExecutableSchema) error { return nil }

func (t trustedDocuments) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	id, hasID := p.Extensions[DocumentIDExtension]
	var hash string
	if pq, ok := p.Extensions["persistedQuery"].(map[string]any); ok {
		hash, _ = pq["sha256Hash"].(string)
	}
	switch {
	case hasID:
		s, ok := id.(string)
		switch {
		case !ok || s == "":
			return refusal(ctx, codes.BadRequest, "documentId must be a document's id: sha256:<64 hex digits>")
		case p.Query != "":
			return refusal(ctx, codes.BadRequest, "send either query or documentId, not both")
		}
		doc, ok := t.docs.lookup(s)
		if !ok {
			return refusal(ctx, codes.PersistedQueryNotFound, "no trusted document has this documentId")
		}
		p.Query = doc
	case p.Query == "" && hash != "":
		doc, ok := t.docs.lookup(hash)
		if !ok {
			return refusal(ctx, codes.PersistedQueryNotFound, "no trusted document has this hash")
		}
		p.Query = doc
	case t.enforce && p.Query != "" && !t.docs.trusted(p.Query):
		return refusal(ctx, codes.TrustedDocumentRequired, "this server runs only its trusted documents: send a documentId from its manifest")
	}
	return nil
}

// refusal is a coded error of an operation refused before it runs, as a
// request error (RefusedRequest).
func refusal(ctx context.Context, code, msg string) *gqlerror.Error {
	refuse(ctx, RefusedRequest, 0, true)
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": code}}
}

// DocumentIDExtension is where the transports put a request's documentId
// (a request parameter gqlgen's decoding does not know): in its
// extensions, under this name.
const DocumentIDExtension = "documentId"
