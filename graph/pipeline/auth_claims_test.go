package pipeline_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/taskgraph/taskgraph/auth"
	"github.com/taskgraph/taskgraph/domain"
	"github.com/taskgraph/taskgraph/internal/testenv"
)

// Tests of the shape of token claims and headers, of token size and
// lifetime, of tokens without kid against a key set, and of look-alike subs.

// claimsRaw signs the JSON header and payload texts exactly as given (so
// they may repeat a name or spell a number oddly) with the test secret.
func claimsRaw(t *testing.T, header, payload string) string {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	signing := enc([]byte(header)) + "." + enc([]byte(payload))
	sig, err := jwt.SigningMethodHS256.Sign(signing, []byte(testenv.Secret))
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + signing + "." + enc(sig)
}

const claimsHS256 = `{"alg":"HS256","typ":"JWT"}`

// claimsPayload is a valid payload for alice at the test clock with extra
// members (JSON text, each with a leading comma) appended.
func claimsPayload(extra string) string {
	return fmt.Sprintf(`{"sub":"alice","iat":%d,"exp":%d%s}`, testenv.Now.Unix(), testenv.Now.Add(time.Hour).Unix(), extra)
}

// claimsWithout is claimsPayload without one of iat and exp, for cases that
// give their own.
func claimsWithout(claim, extra string) string {
	switch claim {
	case "exp":
		return fmt.Sprintf(`{"sub":"alice","iat":%d%s}`, testenv.Now.Unix(), extra)
	case "iat":
		return fmt.Sprintf(`{"sub":"alice","exp":%d%s}`, testenv.Now.Add(time.Hour).Unix(), extra)
	}
	panic(claim)
}

// claimsViewer runs { me { id } } with header and returns the id, or "" and
// checks the request was refused as UNAUTHENTICATED without DynamoDB calls.
func claimsViewer(t *testing.T, e *testenv.Env, header string) (id string, refusal string) {
	t.Helper()
	e.Calls.Reset()
	res := e.Do(t, header, authMe, nil)
	if len(res.Errors) == 0 {
		var got struct{ Me struct{ ID string } }
		if err := json.Unmarshal(res.Data, &got); err != nil {
			t.Fatal(err)
		}
		return got.Me.ID, ""
	}
	authRefused(t, res)
	if n := e.Calls.Total(); n != 0 {
		t.Errorf("%d DynamoDB calls for a refused token", n)
	}
	return "", res.Errors[0].Message
}

func TestAuthRefusesLooseClaims(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	now, hour := testenv.Now.Unix(), testenv.Now.Add(time.Hour).Unix()
	skew := int64(auth.ClockSkew / time.Second)
	valid := authHS256(t, authClaims("alice", nil))
	// The HS256 signature is 32 bytes, so its last base64url character
	// carries 2 unused bits; setting them makes a second spelling of the
	// same signature, which a lax decoder accepts.
	last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", valid[len(valid)-1])
	malleable := valid[:len(valid)-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last|3])

	cases := []struct {
		name, header, says string
	}{
		{"exp as a numeric string", claimsRaw(t, claimsHS256, claimsWithout("exp", fmt.Sprintf(`,"exp":"%d"`, hour))), "integer"},
		{"exp as a float with a fraction", claimsRaw(t, claimsHS256, claimsWithout("exp", fmt.Sprintf(`,"exp":%d.5`, hour))), "integer"},
		{"exp as a float with .0", claimsRaw(t, claimsHS256, claimsWithout("exp", fmt.Sprintf(`,"exp":%d.0`, hour))), "integer"},
		{"exp in exponent form", claimsRaw(t, claimsHS256, claimsWithout("exp", fmt.Sprintf(`,"exp":%de0`, hour))), "integer"},
		{"exp negative", claimsRaw(t, claimsHS256, claimsWithout("exp", `,"exp":-1`)), "integer"},
		{"exp null", claimsRaw(t, claimsHS256, claimsWithout("exp", `,"exp":null`)), "integer"},
		{"exp in the year 285 billion", authHS256(t, authClaims("alice", map[string]any{"exp": int64(9e18)})), "integer"},
		{"exp at the largest int64", authHS256(t, authClaims("alice", map[string]any{"exp": int64(9223372036854775807)})), "integer"},
		{"exp in the year 10000", authHS256(t, authClaims("alice", map[string]any{"exp": int64(253402300800)})), "lifetime"},
		{"exp 25 hours ahead (default limit 24 h)", authHS256(t, authClaims("alice", map[string]any{"exp": testenv.Now.Add(25 * time.Hour).Unix()})), "lifetime"},
		{"exp 24 hours and 2 minutes ahead, without iat", authHS256(t, authClaims("alice", map[string]any{"iat": nil, "exp": testenv.Now.Add(24*time.Hour + 2*time.Minute).Unix()})), "lifetime"},
		{"exp - iat of 25 hours with exp 23 hours ahead", authHS256(t, authClaims("alice", map[string]any{"iat": testenv.Now.Add(-2 * time.Hour).Unix(), "exp": testenv.Now.Add(23 * time.Hour).Unix()})), "lifetime"},
		{"exp 30 seconds ago (no leeway on exp)", authHS256(t, authClaims("alice", map[string]any{"exp": now - 30})), "expired"},
		{"exp now", authHS256(t, authClaims("alice", map[string]any{"exp": now})), "expired"},
		{"iat 3 years in the future", authHS256(t, authClaims("alice", map[string]any{"iat": testenv.Now.AddDate(3, 0, 0).Unix(), "exp": testenv.Now.AddDate(3, 0, 0).Add(time.Hour).Unix()})), "not valid yet"},
		{"iat beyond the clock skew", authHS256(t, authClaims("alice", map[string]any{"iat": now + skew + 1})), "not valid yet"},
		{"nbf beyond the clock skew", authHS256(t, authClaims("alice", map[string]any{"nbf": now + skew + 1})), "not valid yet"},
		{"iat as a string", claimsRaw(t, claimsHS256, claimsWithout("iat", fmt.Sprintf(`,"iat":"%d"`, now))), "integer"},
		{"nbf as a float", claimsRaw(t, claimsHS256, claimsPayload(fmt.Sprintf(`,"nbf":%d.25`, now))), "integer"},
		{"an unknown crit header", claimsRaw(t, `{"alg":"HS256","typ":"JWT","crit":["x-must-know"],"x-must-know":true}`, claimsPayload("")), "crit"},
		{"an empty crit header", claimsRaw(t, `{"alg":"HS256","crit":[]}`, claimsPayload("")), "crit"},
		{"a duplicate sub (the last would win)", claimsRaw(t, claimsHS256, claimsPayload(`,"sub":"bob"`)), "twice"},
		{"a duplicate sub spelled the same", claimsRaw(t, claimsHS256, claimsPayload(`,"sub":"alice"`)), "twice"},
		{"a duplicate sub escaped", claimsRaw(t, claimsHS256, claimsPayload(`,"\u0073ub":"bob"`)), "twice"},
		{"a duplicate sub in upper case", claimsRaw(t, claimsHS256, claimsPayload(`,"SUB":"bob"`)), "twice"},
		{"a duplicate sub with a long s", claimsRaw(t, claimsHS256, claimsPayload(`,"ſub":"bob"`)), "twice"},
		{"a duplicate exp", claimsRaw(t, claimsHS256, claimsPayload(fmt.Sprintf(`,"exp":%d`, testenv.Now.AddDate(1, 0, 0).Unix()))), "twice"},
		{"a duplicate name inside a custom claim", claimsRaw(t, claimsHS256, claimsPayload(`,"roles":[{"r":"user","r":"admin"}]`)), "twice"},
		{"sub only in upper case", claimsRaw(t, claimsHS256, fmt.Sprintf(`{"SUB":"alice","iat":%d,"exp":%d}`, now, hour)), ""},
		{"a duplicate header alg", claimsRaw(t, `{"alg":"none","alg":"HS256"}`, claimsPayload("")), "twice"},
		{"a duplicate header typ", claimsRaw(t, `{"alg":"HS256","typ":"JWT","typ":"at+jwt"}`, claimsPayload("")), "twice"},
		{"a duplicate header kid", claimsRaw(t, `{"alg":"HS256","kid":"a","kid":"b"}`, claimsPayload("")), "twice"},
		{"a payload with trailing data", claimsRaw(t, claimsHS256, claimsPayload("")+`{}`), ""},
		{"a payload that is an array", claimsRaw(t, claimsHS256, `[`+claimsPayload("")+`]`), ""},
		{"a 60 KB token", authHS256(t, authClaims("alice", map[string]any{"pad": strings.Repeat("x", 60<<10)})), "longer"},
		{"a token one byte over the limit", "Bearer " + strings.Repeat("a", auth.MaxTokenBytes+1), "longer"},
		{"a signature with non-canonical base64", malleable, ""},
	}
	for _, c := range cases {
		t.Run(c.name+" is refused", func(t *testing.T) {
			id, msg := claimsViewer(t, e, c.header)
			if id != "" {
				t.Fatalf("accepted as %q", id)
			}
			if !strings.Contains(msg, c.says) {
				t.Errorf("message %q does not say %q", msg, c.says)
			}
		})
	}
	if malleable == valid {
		t.Fatal("the non-canonical signature is the canonical one")
	}

	// What must keep working next to those refusals.
	accepted := []struct{ name, header string }{
		{"a token with integer claims", claimsRaw(t, claimsHS256, claimsPayload(""))},
		{"iat within the clock skew", authHS256(t, authClaims("alice", map[string]any{"iat": now + skew}))},
		{"nbf within the clock skew", authHS256(t, authClaims("alice", map[string]any{"nbf": now + skew}))},
		{"nbf and iat in the past", authHS256(t, authClaims("alice", map[string]any{"nbf": now - 10, "iat": now - 10}))},
		{"a lifetime of exactly 24 hours", authHS256(t, authClaims("alice", map[string]any{"exp": testenv.Now.Add(24 * time.Hour).Unix()}))},
		{"exp one second ahead", authHS256(t, authClaims("alice", map[string]any{"exp": now + 1}))},
		{"a 7 KB token", authHS256(t, authClaims("alice", map[string]any{"pad": strings.Repeat("x", 5000)}))},
		{"the same name in different objects", claimsRaw(t, claimsHS256, claimsPayload(`,"a":{"sub":"x"},"b":{"sub":"y"}`))},
		{"a header with typ and kid", claimsRaw(t, `{"alg":"HS256","typ":"JWT","kid":"k1"}`, claimsPayload(""))},
	}
	for _, c := range accepted {
		t.Run(c.name+" is accepted", func(t *testing.T) {
			if n := len(strings.TrimPrefix(c.header, "Bearer ")); n > auth.MaxTokenBytes {
				t.Fatalf("the token has %d bytes", n)
			}
			if id, msg := claimsViewer(t, e, c.header); id != "alice" {
				t.Fatalf("refused: %s", msg)
			}
		})
	}
}

func TestAuthLifetimeLimit(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	e.Auth.MaxLifetime = time.Hour
	t.Run("a token within a configured limit works", func(t *testing.T) {
		if id, msg := claimsViewer(t, e, authHS256(t, authClaims("alice", nil))); id != "alice" {
			t.Fatalf("refused: %s", msg)
		}
	})
	t.Run("a token over a configured limit is refused", func(t *testing.T) {
		_, msg := claimsViewer(t, e, authHS256(t, authClaims("alice", map[string]any{"exp": testenv.Now.Add(2 * time.Hour).Unix()})))
		if !strings.Contains(msg, "1h0m0s") {
			t.Errorf("message %q does not name the limit", msg)
		}
	})
	t.Run("Sign refuses a lifetime over the limit", func(t *testing.T) {
		if tok, err := e.Auth.Sign("alice", time.Hour+time.Second); err == nil {
			t.Errorf("signed %s", tok)
		}
	})
	t.Run("a token the server signs with the whole lifetime is accepted", func(t *testing.T) {
		for _, limit := range []time.Duration{time.Hour, auth.DefaultMaxTokenLifetime, 30 * 24 * time.Hour} {
			e.Auth.MaxLifetime = limit
			tok, err := e.Auth.Sign("alice", limit)
			if err != nil {
				t.Fatal(err)
			}
			if id, msg := claimsViewer(t, e, "Bearer "+tok); id != "alice" {
				t.Errorf("limit %s: refused: %s", limit, msg)
			}
		}
	})
	t.Run("without a configured limit the default applies to Sign", func(t *testing.T) {
		a := &auth.Authenticator{Secret: []byte("s")}
		if _, err := a.Sign("alice", auth.DefaultMaxTokenLifetime); err != nil {
			t.Errorf("Sign(default limit): %v", err)
		}
		if _, err := a.Sign("alice", auth.DefaultMaxTokenLifetime+time.Second); err == nil {
			t.Error("Sign(over the default limit) succeeded")
		}
	})
}

// claimsJWK is the public JWK of an RSA or EC P-256 key.
func claimsJWK(t *testing.T, kid, alg string, key any) map[string]string {
	t.Helper()
	j := map[string]string{"kid": kid, "use": "sig"}
	if alg != "" {
		j["alg"] = alg
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		j["kty"], j["n"], j["e"] = "RSA", jwkB64(k.N.Bytes()), jwkB64(big.NewInt(int64(k.E)).Bytes())
	case *ecdsa.PrivateKey:
		pub, err := k.PublicKey.ECDH()
		if err != nil {
			t.Fatal(err)
		}
		raw := pub.Bytes()
		j["kty"], j["crv"], j["x"], j["y"] = "EC", "P-256", jwkB64(raw[1:33]), jwkB64(raw[33:])
	}
	return j
}

func TestJWKSTokenWithoutKid(t *testing.T) {
	rsa1, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsa2, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ec1, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	e := testenv.New(t)
	e.MustSeed(t)
	sign := func(m jwt.SigningMethod, kid string, key any) string {
		tok := jwt.NewWithClaims(m, authClaims("alice", nil))
		if kid != "" {
			tok.Header["kid"] = kid
		}
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + s
	}
	for _, c := range []struct {
		name  string
		set   []map[string]string
		token string
		ok    bool
	}{
		{"RS256 without kid, two RSA keys", []map[string]string{claimsJWK(t, "r1", "RS256", rsa1), claimsJWK(t, "r2", "RS256", rsa2)},
			sign(jwt.SigningMethodRS256, "", rsa1), false},
		{"RS256 without kid, two RSA keys without alg", []map[string]string{claimsJWK(t, "r1", "", rsa1), claimsJWK(t, "r2", "", rsa2)},
			sign(jwt.SigningMethodRS256, "", rsa2), false},
		{"RS256 without kid, two RSA keys and an EC key", []map[string]string{claimsJWK(t, "r1", "", rsa1), claimsJWK(t, "e1", "", ec1), claimsJWK(t, "r2", "RS256", rsa2)},
			sign(jwt.SigningMethodRS256, "", rsa1), false},
		{"RS256 with kid, two RSA keys", []map[string]string{claimsJWK(t, "r1", "RS256", rsa1), claimsJWK(t, "r2", "RS256", rsa2)},
			sign(jwt.SigningMethodRS256, "r2", rsa2), true},
		{"RS256 without kid, one key", []map[string]string{claimsJWK(t, "r1", "RS256", rsa1)},
			sign(jwt.SigningMethodRS256, "", rsa1), true},
		{"RS256 without kid, one RSA and one EC key", []map[string]string{claimsJWK(t, "r1", "RS256", rsa1), claimsJWK(t, "e1", "ES256", ec1)},
			sign(jwt.SigningMethodRS256, "", rsa1), true},
		{"RS256 without kid, one RSA and one EC key, neither with alg", []map[string]string{claimsJWK(t, "r1", "", rsa1), claimsJWK(t, "e1", "", ec1)},
			sign(jwt.SigningMethodRS256, "", rsa1), true},
		{"ES256 without kid, one RSA and one EC key", []map[string]string{claimsJWK(t, "r1", "RS256", rsa1), claimsJWK(t, "e1", "ES256", ec1)},
			sign(jwt.SigningMethodES256, "", ec1), true},
		{"RS256 without kid, one key that did not sign it", []map[string]string{claimsJWK(t, "r1", "RS256", rsa1)},
			sign(jwt.SigningMethodRS256, "", rsa2), false},
		{"PS256 without kid, two RSA keys without alg", []map[string]string{claimsJWK(t, "r1", "", rsa1), claimsJWK(t, "r2", "", rsa2)},
			sign(jwt.SigningMethodPS256, "", rsa1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := json.Marshal(map[string]any{"keys": c.set})
			if err != nil {
				t.Fatal(err)
			}
			kf, err := keyfunc.NewJWKSetJSON(raw)
			if err != nil {
				t.Fatal(err)
			}
			e.Auth.JWKS = kf.Keyfunc
			id, msg := claimsViewer(t, e, c.token)
			switch {
			case c.ok && id != "alice":
				t.Fatalf("refused: %s", msg)
			case !c.ok && id != "":
				t.Fatalf("accepted as %q", id)
			}
		})
	}
}

func TestAuthRefusesLookAlikeSubs(t *testing.T) {
	e := testenv.New(t)
	e.MustSeed(t)
	for _, c := range []struct{ name, sub string }{
		{"zero-width space", "ali\u200bce"},
		{"zero-width non-joiner", "ali\u200cce"},
		{"zero-width joiner", "alice\u200d"},
		{"word joiner", "\u2060alice"},
		{"BOM", "\ufeffalice"},
		{"soft hyphen", "ali\u00adce"},
		{"left-to-right mark", "alice\u200e"},
		{"right-to-left mark", "alice\u200f"},
		{"right-to-left override", "\u202eecila"},
		{"left-to-right override", "\u202dalice\u202c"},
		{"right-to-left isolate", "\u2067alice\u2069"},
		{"Arabic letter mark", "alice\u061c"},
		{"tag characters", "alice\U000E0061"},
		{"variation selector", "alice\ufe0e"},
		{"combining grapheme joiner", "ali\u034fce"},
		{"Hangul filler", "\u3164alice"},
		{"private use", "alice\ue000"},
		{"unassigned", "alice\u0378"},
		{"noncharacter", "alice\ufdd0"},
		{"line separator", "alice\u2028"},
		{"paragraph separator", "alice\u2029"},
		{"fullwidth letters", "\uff41\uff4c\uff49\uff43\uff45"},
		{"fullwidth vertical line", "auth0\uff5cabc123"},
		{"mathematical bold letters", "\U0001d41a\U0001d425\U0001d422\U0001d41c\U0001d41e"},
		{"ligature", "\ufb01sh"},
		{"circled letter", "\u24d0lice"},
		{"decomposed accent (NFD)", "Zoe\u0308"},
	} {
		t.Run(c.name+" is refused", func(t *testing.T) {
			before := e.Dump(t)
			e.Calls.Reset()
			res := e.Do(t, authHS256(t, authClaims(c.sub, nil)), authMutation, nil)
			authRefused(t, res)
			if !strings.Contains(res.Errors[0].Message, "sub") {
				t.Errorf("message %q does not name the sub", res.Errors[0].Message)
			}
			if n := e.Calls.Total(); n != 0 || e.Dump(t) != before {
				t.Errorf("a refused token made %d DynamoDB calls or changed the table", n)
			}
		})
	}
	// Subs as identity providers issue them.
	for _, c := range []struct{ name, sub string }{
		{"Auth0", "auth0|64b7f0c2a1e9d3f5c8b2a1e0"},
		{"Auth0 social", "google-oauth2|104857391027364519283"},
		{"Auth0 enterprise", "samlp|example-corp|jdoe@example.com"},
		{"Google", "110169484474386276334"},
		{"Okta", "00u1a2b3c4D5e6F7g8h9"},
		{"Cognito", "94f8e5a2-1c3b-4d7e-9f60-2a8b7c6d5e4f"},
		{"Azure AD object id", "3F2504E0-4F89-11D3-9A0C-0305E82C3301"},
		{"Azure AD pairwise sub", "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ"},
		{"Keycloak", "f:8f6b2c1e-0d4a-4b3c-9e8f-1a2b3c4d5e6f:jdoe"},
		{"a precomposed accent", "Zo\u00eb"},
		{"CJK", "\u65e5\u672c\u30e6\u30fc\u30b6\u30fc"},
	} {
		t.Run(c.name+" sub is accepted", func(t *testing.T) {
			header := authHS256(t, authClaims(c.sub, nil))
			res := e.Do(t, header, `mutation { updateProfile(input: {name: "Someone"}) { id } }`, nil)
			if len(res.Errors) != 0 {
				t.Fatalf("updateProfile: %+v", res.Errors)
			}
			if id, msg := claimsViewer(t, e, header); id != c.sub {
				t.Fatalf("me.id = %q (%s), want %q", id, msg, c.sub)
			}
		})
	}
}

// FuzzTokenClaims signs arbitrary header and payload texts with the secret
// and checks that what Verify accepts is unambiguous: the sub it returns is
// the payload's sub as a plain map decoding reads it, exp is an integer
// within the lifetime limit, no crit header, and the sub is a valid user id.
// `go test ./graph -run '^$' -fuzz FuzzTokenClaims` explores further.
func FuzzTokenClaims(f *testing.F) {
	now, hour := testenv.Now.Unix(), testenv.Now.Add(time.Hour).Unix()
	for _, seed := range [][2]string{
		{claimsHS256, claimsPayload("")},
		{claimsHS256, claimsPayload(`,"sub":"bob"`)},
		{claimsHS256, claimsPayload(`,"SUB":"bob"`)},
		{claimsHS256, fmt.Sprintf(`{"Sub":"bob","iat":%d,"exp":%d}`, now, hour)},
		{claimsHS256, fmt.Sprintf(`{"sub":"alice","exp":"%d"}`, hour)},
		{claimsHS256, fmt.Sprintf(`{"sub":"alice","exp":%d.5}`, hour)},
		{claimsHS256, fmt.Sprintf(`{"sub":"alice","exp":%d,"nbf":%d}`, hour, now+59)},
		{claimsHS256, `{"sub":"alice","exp":9000000000000000000}`},
		{claimsHS256, fmt.Sprintf(`{"sub":"\uff41lice","exp":%d}`, hour)},
		{`{"alg":"HS256","crit":["b64"],"b64":false}`, claimsPayload("")},
		{`{"alg":"none","alg":"HS256"}`, claimsPayload("")},
		{`{"alg":"HS256","ALG":"none"}`, claimsPayload("")},
	} {
		f.Add(seed[0], seed[1])
	}
	a := &auth.Authenticator{Secret: []byte(testenv.Secret), Now: func() time.Time { return testenv.Now }}
	f.Fuzz(func(t *testing.T, header, payload string) {
		sub, err := a.Verify(claimsRaw(t, header, payload))
		if err != nil {
			if err.Error() == "" {
				t.Error("a refusal without a message")
			}
			return
		}
		var h, p map[string]any
		dec := json.NewDecoder(strings.NewReader(payload))
		dec.UseNumber()
		if json.Unmarshal([]byte(header), &h) != nil || dec.Decode(&p) != nil {
			t.Fatalf("accepted a header or payload that is no JSON object: %q %q", header, payload)
		}
		if _, ok := h["crit"]; ok {
			t.Errorf("accepted a crit header: %q", header)
		}
		if p["sub"] != sub {
			t.Errorf("Verify says sub %q, a map decoding says %v: %q", sub, p["sub"], payload)
		}
		exp, ok := p["exp"].(json.Number)
		n, err := exp.Int64()
		if !ok || err != nil || n <= now || n > testenv.Now.Add(auth.DefaultMaxTokenLifetime+auth.ClockSkew).Unix() {
			t.Errorf("accepted exp %v: %q", p["exp"], payload)
		}
		if domain.ValidUserID(sub) != nil {
			t.Errorf("accepted sub %q", sub)
		}
	})
}
