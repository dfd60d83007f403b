package pipeline_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskgraph/taskgraph/graph/codes"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// manifestPath is the persisted-documents manifest graphql-codegen writes
// for the TypeScript client (scripts/clients).
const manifestPath = "../../clients/ts/src/gql/persisted-documents.json"

// mustManifest reads the generated manifest (testenv.Manifest).
func mustManifest(t *testing.T) (keys map[string]string, docs map[string]string) {
	t.Helper()
	return testenv.Manifest(t, manifestPath)
}

func sha(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }

func TestTrustedDocumentsLoad(t *testing.T) {
	t.Run("the generated manifest loads", func(t *testing.T) {
		td, err := pipeline.LoadTrustedDocuments(manifestPath)
		if err != nil {
			t.Fatal(err)
		}
		keys, _ := mustManifest(t)
		if td.Len() != len(keys) || td.Len() < 5 {
			t.Fatalf("loaded %d documents, the manifest has %d operations", td.Len(), len(keys))
		}
	})
	doc := "query Me { me { id } }"
	good := sha(doc)
	bad := sha(doc + " ")
	tests := []struct {
		name, manifest, wantErr string
		wantLen                 int
	}{
		{"sha256: prefix", `{"sha256:` + good + `": "query Me { me { id } }"}`, "", 1},
		{"bare hex", `{"` + good + `": "query Me { me { id } }"}`, "", 1},
		{"apollo format", `{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id":"` + good + `","name":"Me","type":"query","body":"query Me { me { id } }"}]}`, "", 1},
		{"wrong hash", `{"sha256:` + bad + `": "query Me { me { id } }"}`, "is not the sha256 of its document", 0},
		{"apollo wrong hash", `{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id":"` + bad + `","body":"query Me { me { id } }"}]}`, "is not the sha256 of its document", 0},
		{"apollo other version", `{"format":"apollo-persisted-query-manifest","version":2,"operations":[]}`, "version 1", 0},
		{"not a hash", `{"Me": "query Me { me { id } }"}`, "neither sha256", 0},
		{"document not a string", `{"` + good + `": 5}`, "not a string", 0},
		{"empty", `{}`, "holds no documents", 0},
		{"not JSON", `query Me { me { id } }`, "not a JSON object", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "manifest.json")
			if err := os.WriteFile(path, []byte(tc.manifest), 0o600); err != nil {
				t.Fatal(err)
			}
			td, err := pipeline.LoadTrustedDocuments(path)
			if tc.wantErr == "" {
				if err != nil || td.Len() != tc.wantLen {
					t.Fatalf("err %v, want %d documents", err, tc.wantLen)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v; want one naming %s and saying %q", err, path, tc.wantErr)
			}
		})
	}
}

// trustedEnv is a seeded Env with a handler that loads the generated
// manifest, in production mode or not.
func trustedEnv(t *testing.T, production bool) (*testenv.Env, http.Handler) {
	t.Helper()
	e := testenv.New(t)
	e.MustSeed(t)
	td, err := pipeline.LoadTrustedDocuments(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	return e, e.NewHandler(pipeline.Options{Deps: pipeline.Deps{TrustedDocuments: td}, Production: production})
}

func body(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTrustedDocumentsRequests(t *testing.T) {
	keys, docs := mustManifest(t)
	dashVars := map[string]any{"projects": 10, "tasks": 5, "comments": 2}
	untrusted := "query { me { name email projects(first: 50) { edges { node { name } } } } }"
	for _, production := range []bool{true, false} {
		mode := map[bool]string{true: "production", false: "development"}[production]
		t.Run(mode, func(t *testing.T) {
			e, h := trustedEnv(t, production)
			runs := func(t *testing.T, req map[string]any) {
				t.Helper()
				e.Calls.Reset()
				raw := e.Send(t, nil, testenv.Via(h), e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", body(t, req)))
				status, res := raw.Status, *raw.Decode(t)
				if status != http.StatusOK || len(res.Errors) > 0 {
					t.Fatalf("status %d, errors %+v", status, res.Errors)
				}
				var data struct {
					Me struct {
						Name     string
						Projects struct {
							Edges []struct{ Node struct{ Name string } }
						}
					}
				}
				if err := json.Unmarshal(res.Data, &data); err != nil || data.Me.Name == "" || len(data.Me.Projects.Edges) == 0 || data.Me.Projects.Edges[0].Node.Name == "" {
					t.Fatalf("data %s (%v)", res.Data, err)
				}
				if e.Calls.Total() == 0 {
					t.Fatal("the operation made no DynamoDB call")
				}
			}
			refused := func(t *testing.T, req map[string]any, code string) {
				t.Helper()
				e.Calls.Reset()
				raw := e.Send(t, nil, testenv.Via(h), e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", body(t, req)))
				status, res := raw.Status, *raw.Decode(t)
				if status != http.StatusBadRequest || len(res.Errors) != 1 || res.Errors[0].Code() != code || res.Data != nil {
					t.Fatalf("status %d, errors %+v, data %s; want 400 and one %s", status, res.Errors, res.Data, code)
				}
				if n := e.Calls.Total(); n != 0 {
					t.Fatalf("a refused request made %d DynamoDB calls: %v", n, e.Calls)
				}
			}

			t.Run("documentId runs the manifest's document", func(t *testing.T) {
				runs(t, map[string]any{"documentId": keys["Dashboard"], "variables": dashVars})
			})
			t.Run("bare hex documentId", func(t *testing.T) {
				runs(t, map[string]any{"documentId": strings.TrimPrefix(keys["Dashboard"], "sha256:"), "variables": dashVars})
			})
			t.Run("the manifest's text as query", func(t *testing.T) {
				runs(t, map[string]any{"query": docs["Dashboard"], "variables": dashVars})
			})
			t.Run("APQ hash of a trusted document without its text", func(t *testing.T) {
				runs(t, map[string]any{"variables": dashVars, "extensions": map[string]any{
					"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha(docs["Dashboard"])}}})
			})
			t.Run("unknown documentId", func(t *testing.T) {
				refused(t, map[string]any{"documentId": "sha256:" + sha(untrusted)}, codes.PersistedQueryNotFound)
			})
			t.Run("APQ hash of an untrusted query without its text", func(t *testing.T) {
				refused(t, map[string]any{"extensions": map[string]any{
					"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha(untrusted)}}}, codes.PersistedQueryNotFound)
			})
			t.Run("documentId and query together", func(t *testing.T) {
				refused(t, map[string]any{"documentId": keys["Dashboard"], "QUERY": untrusted}, codes.BadRequest)
			})
			t.Run("a second JSON value after the request", func(t *testing.T) {
				e.Calls.Reset()
				raw := e.Send(t, nil, testenv.Via(h), e.As("alice"), testenv.RawBody(http.MethodPost, "application/json", body(t, map[string]any{"documentId": keys["Dashboard"]})+`{"query":"{ me { email } }"}`))
				status, res := raw.Status, *raw.Decode(t)
				if status != http.StatusBadRequest || len(res.Errors) != 1 || res.Errors[0].Code() != codes.BadRequest || e.Calls.Total() != 0 {
					t.Fatalf("status %d, errors %+v, calls %d", status, res.Errors, e.Calls.Total())
				}
			})

			untrustedReqs := map[string]map[string]any{
				"raw query": {"query": untrusted},
				"APQ hash with an untrusted text": {"query": untrusted, "extensions": map[string]any{
					"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha(untrusted)}}},
				"APQ hash of a trusted document with an untrusted text": {"query": untrusted, "extensions": map[string]any{
					"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha(docs["Dashboard"])}}},
			}
			for name, req := range untrustedReqs {
				t.Run(name, func(t *testing.T) {
					if production {
						refused(t, req, codes.TrustedDocumentRequired)
						return
					}
					runs(t, req) // without -production raw queries still pass
				})
			}
		})
	}
}
