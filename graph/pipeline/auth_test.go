package pipeline_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// authToken signs claims with method and key and returns a header value.
func authToken(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatalf("signing a %s token: %v", method.Alg(), err)
	}
	return "Bearer " + s
}

// authClaims are valid claims for sub at the test clock; extra entries
// replace or (with a nil value) remove claims.
func authClaims(sub string, extra map[string]any) jwt.MapClaims {
	c := jwt.MapClaims{"sub": sub, "iat": testenv.Now.Unix(), "exp": testenv.Now.Add(time.Hour).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func authHS256(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	return authToken(t, jwt.SigningMethodHS256, []byte(testenv.Secret), claims)
}

// authUnsigned crafts an `alg: none` token by hand.
func authUnsigned(t *testing.T, header map[string]any, claims jwt.MapClaims) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return "Bearer " + enc(header) + "." + enc(claims) + "."
}

// authRefused checks that res is one UNAUTHENTICATED error and null data.
func authRefused(t *testing.T, res *testenv.Response) {
	t.Helper()
	if len(res.Errors) != 1 || res.Errors[0].Code() != "UNAUTHENTICATED" {
		t.Fatalf("want one UNAUTHENTICATED error, got %+v (data %s)", res.Errors, res.Data)
	}
	if d := strings.TrimSpace(string(res.Data)); d != "" && d != "null" {
		t.Errorf("data = %s, want null", d)
	}
	if res.Errors[0].Message == "" {
		t.Error("the error has no message")
	}
}

const (
	authMe       = `{ me { id } }`
	authMutation = `mutation { updateProfile(input: {name: "Mallory"}) { id } }`
)

func TestAuthRefusesMissingAndBadTokens(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	valid := authHS256(t, authClaims("alice", nil))
	rawValid := strings.TrimPrefix(valid, "Bearer ")

	cases := []struct {
		name   string
		header string
	}{
		{"no token", ""},
		{"expired token", authHS256(t, authClaims("alice", map[string]any{"exp": testenv.Now.Add(-time.Second).Unix()}))},
		{"token expired long ago", authHS256(t, authClaims("alice", map[string]any{"exp": testenv.Now.AddDate(-1, 0, 0).Unix()}))},
		{"token not valid yet", authHS256(t, authClaims("alice", map[string]any{"nbf": testenv.Now.Add(time.Hour).Unix()}))},
		{"token signed with another secret", authToken(t, jwt.SigningMethodHS256, []byte("another-secret"), authClaims("alice", nil))},
		{"token signed with an empty secret", authToken(t, jwt.SigningMethodHS256, []byte{}, authClaims("alice", nil))},
		{"alg none token", authToken(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, authClaims("alice", nil))},
		{"hand-made alg none token", authUnsigned(t, map[string]any{"alg": "none", "typ": "JWT"}, authClaims("alice", nil))},
		{"hand-made alg None token", authUnsigned(t, map[string]any{"alg": "None", "typ": "JWT"}, authClaims("alice", nil))},
		{"RS256 token", authToken(t, jwt.SigningMethodRS256, rsaKey, authClaims("alice", nil))},
		{"HS512 token with the right secret", authToken(t, jwt.SigningMethodHS512, []byte(testenv.Secret), authClaims("alice", nil))},
		{"HS384 token with the right secret", authToken(t, jwt.SigningMethodHS384, []byte(testenv.Secret), authClaims("alice", nil))},
		{"token without exp", authHS256(t, authClaims("alice", map[string]any{"exp": nil}))},
		{"token with a string exp", authHS256(t, authClaims("alice", map[string]any{"exp": "tomorrow"}))},
		{"tampered signature", valid[:len(valid)-2] + strings.Map(func(r rune) rune {
			if r == 'A' {
				return 'B'
			}
			return 'A'
		}, valid[len(valid)-2:])},
		{"tampered payload", "Bearer " + strings.Split(rawValid, ".")[0] + "." +
			strings.Split(strings.TrimPrefix(authHS256(t, authClaims("bob", nil)), "Bearer "), ".")[1] + "." +
			strings.Split(rawValid, ".")[2]},
		{"header Bearer alone", "Bearer"},
		{"header Bearer and a space", "Bearer "},
		{"Basic scheme", "Basic x"},
		{"Basic scheme with a valid token", "Basic " + rawValid},
		{"token without scheme", rawValid},
		{"three dots that are no token", "Bearer a.b.c"},
		{"garbage token", "Bearer not-a-token"},
		{"two tokens", valid + " " + rawValid},
		{"sub with hash", authHS256(t, authClaims("alice#x", nil))},
		{"sub with space", authHS256(t, authClaims("ali ce", nil))},
		{"sub with tab", authHS256(t, authClaims("alice\t", nil))},
		{"sub with newline", authHS256(t, authClaims("alice\n", nil))},
		{"sub with a control character", authHS256(t, authClaims("ali\x01ce", nil))},
		{"empty sub", authHS256(t, authClaims("", nil))},
		{"no sub", authHS256(t, authClaims("alice", map[string]any{"sub": nil}))},
		{"sub of 129 characters", authHS256(t, authClaims(strings.Repeat("a", 129), nil))},
		{"sub that is a project id", authHS256(t, authClaims("prj#01K3ZZZZZZZZZZZZZZZZZZZZZZ", nil))},
	}
	ops := []struct{ name, query string }{{"query", authMe}, {"mutation", authMutation},
		{"query mixing introspection and data", `{ __typename __schema { queryType { name } } me { id } }`}}
	for _, c := range cases {
		for _, op := range ops {
			t.Run(c.name+" is refused on a "+op.name, func(t *testing.T) {
				before := e.Dump(t)
				e.Calls.Reset()
				authRefused(t, e.Do(t, c.header, op.query, nil))
				if n := e.Calls.Total(); n != 0 {
					t.Errorf("%d DynamoDB calls for a refused request: %v", n, e.Calls.ByOp())
				}
				if e.Dump(t) != before {
					t.Error("a refused mutation changed the table")
				}
			})
		}
	}

	t.Run("a bad token is not taken for no token", func(t *testing.T) {
		none := e.Do(t, "", authMe, nil)
		expired := e.Do(t, authHS256(t, authClaims("alice", map[string]any{"exp": testenv.Now.Add(-time.Minute).Unix()})), authMe, nil)
		forged := e.Do(t, authToken(t, jwt.SigningMethodHS256, []byte("x"), authClaims("alice", nil)), authMe, nil)
		authRefused(t, none)
		authRefused(t, expired)
		authRefused(t, forged)
		if expired.Errors[0].Message == none.Errors[0].Message || forged.Errors[0].Message == none.Errors[0].Message {
			t.Errorf("a bad token gets the no-token message: %q / %q / %q", none.Errors[0].Message,
				expired.Errors[0].Message, forged.Errors[0].Message)
		}
		if !strings.Contains(expired.Errors[0].Message, "expired") {
			t.Errorf("expired token message %q does not say so", expired.Errors[0].Message)
		}
	})
}

func TestAuthIntrospectionWithoutToken(t *testing.T) {
	e := testenv.New(t)
	expired := authHS256(t, authClaims("alice", map[string]any{"exp": testenv.Now.Add(-time.Second).Unix()}))
	forged := authToken(t, jwt.SigningMethodHS256, []byte("x"), authClaims("alice", nil))
	allowed := []struct{ name, query, want string }{
		{"__schema", `{ __schema { queryType { name } } }`, `{"__schema":{"queryType":{"name":"Query"}}}`},
		{"__type", `{ __type(name: "Task") { name kind } }`, `{"__type":{"name":"Task","kind":"OBJECT"}}`},
		{"__typename alone", `{ __typename }`, `{"__typename":"Query"}`},
		{"introspection through a fragment spread", `query { ...I } fragment I on Query { __schema { mutationType { name } } }`,
			`{"__schema":{"mutationType":{"name":"Mutation"}}}`},
		{"introspection through an inline fragment", `{ ... on Query { __type(name: "Date") { kind } } }`,
			`{"__type":{"kind":"SCALAR"}}`},
	}
	// The code (graph/pipeline/viewer.go, requireViewer) lets pure introspection
	// through whenever the token is missing or bad: a bad token is refused
	// on anything but introspection, as the contract's error table says.
	for _, header := range []struct{ name, value string }{{"no token", ""}, {"an expired token", expired},
		{"a forged token", forged}} {
		for _, c := range allowed {
			t.Run(c.name+" works with "+header.name, func(t *testing.T) {
				e.Calls.Reset()
				res := e.Do(t, header.value, c.query, nil)
				if len(res.Errors) != 0 {
					t.Fatalf("errors %+v", res.Errors)
				}
				if got := string(res.Data); got != c.want {
					t.Errorf("data = %s, want %s", got, c.want)
				}
				if n := e.Calls.Total(); n != 0 {
					t.Errorf("%d DynamoDB calls for introspection", n)
				}
			})
		}
	}
	refused := []struct{ name, query string }{
		{"__typename with a data field", `{ __typename me { id } }`},
		{"__schema with a data field", `{ __schema { queryType { name } } user(id: "alice") { id } }`},
		{"a data field inside an inline fragment", `{ ... on Query { __typename me { id } } }`},
		{"a data field inside a fragment spread", `query { __typename ...F } fragment F on Query { me { id } }`},
		{"a data field in a nested fragment", `query { ...A } fragment A on Query { __typename ...B } fragment B on Query { node(id: "alice") { id } }`},
		{"only __typename under a data field", `{ node(id: "alice") { __typename } }`},
		{"a mutation with __typename", `mutation { __typename createProject(input: {name: "x"}) { id } }`},
		{"a data field aliased like introspection", `{ __schema: me { id } }`},
	}
	for _, c := range refused {
		t.Run(c.name+" is refused without a token", func(t *testing.T) {
			e.Calls.Reset()
			authRefused(t, e.Do(t, "", c.query, nil))
			if n := e.Calls.Total(); n != 0 {
				t.Errorf("%d DynamoDB calls without a token", n)
			}
		})
	}
}

func TestAuthValidTokenIsTheViewer(t *testing.T) {
	e := testenv.New(t)
	for _, sub := range []string{"auth0|abc123", "9b2f7c1e-3a4d-4e5f-8a6b-7c8d9e0f1a2b", strings.Repeat("z", 128),
		"Zoë_Ångström", "google-oauth2|1234567890"} {
		name := sub
		if len(name) > 40 {
			name = "128 characters"
		}
		t.Run("sub "+name, func(t *testing.T) {
			header := authHS256(t, authClaims(sub, nil))
			var created struct {
				UpdateProfile struct{ ID string }
			}
			res := e.Do(t, header, `mutation { updateProfile(input: {name: "Someone"}) { id } }`, nil)
			if len(res.Errors) != 0 {
				t.Fatalf("updateProfile: %+v", res.Errors)
			}
			if err := json.Unmarshal(res.Data, &created); err != nil || created.UpdateProfile.ID != sub {
				t.Fatalf("updateProfile id = %q (%v), want %q", created.UpdateProfile.ID, err, sub)
			}
			res = e.Do(t, header, `{ me { id name } }`, nil)
			var got struct{ Me struct{ ID, Name string } }
			if len(res.Errors) != 0 {
				t.Fatalf("me: %+v", res.Errors)
			}
			if err := json.Unmarshal(res.Data, &got); err != nil || got.Me.ID != sub || got.Me.Name != "Someone" {
				t.Errorf("me = %+v (%v), want id %q", got.Me, err, sub)
			}
		})
	}
	t.Run("a token the server signed works", func(t *testing.T) {
		e.MustSeed(t)
		var got struct{ Me struct{ ID string } }
		e.MustQuery(t, "alice", authMe, nil, &got)
		if got.Me.ID != "alice" {
			t.Errorf("me.id = %q, want alice", got.Me.ID)
		}
	})
	t.Run("a token about to expire still works", func(t *testing.T) {
		res := e.Do(t, authHS256(t, authClaims("alice", map[string]any{"exp": testenv.Now.Add(time.Second).Unix()})), authMe, nil)
		if len(res.Errors) != 0 || !strings.Contains(string(res.Data), `"alice"`) {
			t.Errorf("errors %+v, data %s", res.Errors, res.Data)
		}
	})
}
