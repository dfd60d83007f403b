package pipeline_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/taskgraph/taskgraph/graph/pipeline"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

func jwkB64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwksServer serves a JWK Set with one RSA and one EC P-256 public key and
// counts how often it is fetched.
func jwksServer(t *testing.T, rsaKey *rsa.PrivateKey, ecKey *ecdsa.PrivateKey) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	ecPub, err := ecKey.PublicKey.ECDH()
	if err != nil {
		t.Fatal(err)
	}
	raw := ecPub.Bytes() // 0x04 || X || Y
	set := map[string]any{"keys": []map[string]string{
		{"kty": "RSA", "kid": "rsa1", "use": "sig", "alg": "RS256", "n": jwkB64(rsaKey.N.Bytes()),
			"e": jwkB64(big.NewInt(int64(rsaKey.E)).Bytes())},
		{"kty": "EC", "kid": "ec1", "use": "sig", "alg": "ES256", "crv": "P-256", "x": jwkB64(raw[1:33]), "y": jwkB64(raw[33:])},
	}}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestJWKSTokens(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	srv, hits := jwksServer(t, rsaKey, ecKey)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kf, err := keyfunc.NewDefaultCtx(ctx, []string{srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := testenv.New(t)
	e.MustSeed(t)
	e.Auth.JWKS = kf.Keyfunc
	e.Auth.Issuer, e.Auth.Audience = "https://issuer.example", "taskgraph"
	e.Handler = e.NewHandler(pipeline.Options{}) // on e.Auth, now with the JWK Set

	claims := func(mod func(*jwt.RegisteredClaims)) jwt.RegisteredClaims {
		c := jwt.RegisteredClaims{Subject: "alice", Issuer: "https://issuer.example", Audience: jwt.ClaimStrings{"taskgraph"},
			ExpiresAt: jwt.NewNumericDate(testenv.Now.Add(time.Hour))}
		if mod != nil {
			mod(&c)
		}
		return c
	}
	sign := func(m jwt.SigningMethod, kid string, key any, c jwt.RegisteredClaims) string {
		tok := jwt.NewWithClaims(m, c)
		tok.Header["kid"] = kid
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		token string
		ok    bool
	}{
		{"an RS256 token signed by the provider's key", sign(jwt.SigningMethodRS256, "rsa1", rsaKey, claims(nil)), true},
		{"an ES256 token signed by the provider's key", sign(jwt.SigningMethodES256, "ec1", ecKey, claims(nil)), true},
		{"an HS256 token with the shared secret", sign(jwt.SigningMethodHS256, "", []byte(testenv.Secret), claims(nil)), true},
		{"an RS256 token signed by another key", sign(jwt.SigningMethodRS256, "rsa1", otherKey, claims(nil)), false},
		{"a token naming an unknown kid", sign(jwt.SigningMethodRS256, "nope", rsaKey, claims(nil)), false},
		{"a token of another issuer", sign(jwt.SigningMethodRS256, "rsa1", rsaKey, claims(func(c *jwt.RegisteredClaims) { c.Issuer = "https://evil.example" })), false},
		{"a token for another audience", sign(jwt.SigningMethodRS256, "rsa1", rsaKey, claims(func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"other"} })), false},
		{"a token without issuer", sign(jwt.SigningMethodES256, "ec1", ecKey, claims(func(c *jwt.RegisteredClaims) { c.Issuer = "" })), false},
		{"an expired token", sign(jwt.SigningMethodES256, "ec1", ecKey, claims(func(c *jwt.RegisteredClaims) { c.ExpiresAt = jwt.NewNumericDate(testenv.Now.Add(-time.Minute)) })), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.Do(t, "Bearer "+tc.token, "{ me { id } }", nil)
			switch {
			case tc.ok && (len(res.Errors) != 0 || string(res.Data) != `{"me":{"id":"alice"}}`):
				t.Fatalf("want alice, got %s %+v", res.Data, res.Errors)
			case !tc.ok && (len(res.Errors) != 1 || res.Errors[0].Code() != "UNAUTHENTICATED"):
				t.Fatalf("want UNAUTHENTICATED, got %s %+v", res.Data, res.Errors)
			}
		})
	}
	// The set is fetched once at start and cached; an unknown kid may
	// trigger a rate-limited refresh, never one fetch per token.
	if n := hits.Load(); n < 1 || n > 3 {
		t.Errorf("the JWK Set was fetched %d times, want it cached (1 to 3)", n)
	}
}
