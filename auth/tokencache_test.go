package auth

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestVerifiedTokens proves that a token verified once is not verified
// again within verifiedFor, and that its times are still checked on every
// request: an expired or not yet valid token is refused from the cache as
// it would be without it, and a refused token is never remembered.
func TestVerifiedTokens(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := start
	secret := []byte("secret")
	a := &Authenticator{Now: func() time.Time { return now }, Secret: secret}
	hs := func(c jwt.RegisteredClaims) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	verify := func(tok string) (string, error) {
		sub, _, err := a.Check("Bearer " + tok)
		return sub, err
	}
	tok := hs(jwt.RegisteredClaims{Subject: "ann", IssuedAt: jwt.NewNumericDate(start), ExpiresAt: jwt.NewNumericDate(start.Add(time.Hour))})
	if sub, err := verify(tok); sub != "ann" || err != nil {
		t.Fatalf("verify = %q, %v", sub, err)
	}
	// Not verified again: with another secret, only the cache accepts it.
	a.Secret = []byte("another secret")
	now = start.Add(30 * time.Second)
	if sub, err := verify(tok); sub != "ann" || err != nil {
		t.Fatalf("verify within verifiedFor = %q, %v; want it taken from the cache", sub, err)
	}
	now = start.Add(verifiedFor)
	if sub, err := verify(tok); err == nil {
		t.Errorf("a token was remembered for verifiedFor or longer (accepted as %q)", sub)
	}
	a.Secret = secret
	// Expiry is checked on a hit: remember it again, then reach exp.
	now = start.Add(time.Hour - 10*time.Second)
	if _, err := verify(tok); err != nil {
		t.Fatal(err)
	}
	now = start.Add(time.Hour)
	if sub, err := verify(tok); err == nil {
		t.Errorf("an expired token in the cache was accepted as %q", sub)
	}
	// A token not valid yet is not remembered; one remembered is refused
	// before its notBefore.
	now = start
	early := hs(jwt.RegisteredClaims{Subject: "bob", NotBefore: jwt.NewNumericDate(start.Add(10 * time.Minute)),
		ExpiresAt: jwt.NewNumericDate(start.Add(time.Hour))})
	if _, err := verify(early); err == nil {
		t.Error("a token whose nbf is 10 minutes ahead was accepted")
	}
	if _, _, ok := a.verified.get(early, now); ok {
		t.Error("a refused token was remembered")
	}
	now = start.Add(9*time.Minute + 30*time.Second) // within ClockSkew of nbf
	if sub, err := verify(early); sub != "bob" || err != nil {
		t.Fatalf("verify within ClockSkew of nbf = %q, %v", sub, err)
	}
	if _, _, ok := a.verified.get(early, start.Add(8*time.Minute+59*time.Second)); ok {
		t.Error("a remembered token was accepted more than ClockSkew before its nbf")
	}
	// The lifetime limit too: a token whose exp lies more than the limit
	// (plus ClockSkew) ahead is refused from the cache as without it.
	a.verified.put("long", "carol", start.Add(48*time.Hour), start.Add(24*time.Hour-ClockSkew), start)
	if _, _, ok := a.verified.get("long", start); ok {
		t.Error("a remembered token was accepted before its lifetime limit allows")
	}
}
