package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// verifiedTokens remembers the bearer tokens verified in the last
// verifiedFor, so that a client's every request does not pay for decoding,
// checking and verifying its token again (a fifth of a small query's
// request-handling CPU). A token is found by the SHA-256 of its text; on a
// hit its times are checked again against the clock (exp, nbf, iat, the
// lifetime limit), so an expired token is refused as before. Only tokens
// that passed every check are kept; a key removed from the JWKS stops
// accepting its tokens within verifiedFor. At most maxVerified tokens are
// kept; when full, half of them are dropped (the map's order: any half).
type verifiedTokens struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]verifiedToken
}

type verifiedToken struct {
	sub       string
	exp       time.Time // refused from then on
	notBefore time.Time // refused before
	at        time.Time // when it was verified
}

const (
	verifiedFor = time.Minute
	maxVerified = 4096
)

func (v *verifiedTokens) get(raw string, now time.Time) (string, time.Time, bool) {
	k := sha256.Sum256([]byte(raw))
	v.mu.Lock()
	t, ok := v.m[k]
	v.mu.Unlock()
	if !ok || !now.Before(t.exp) || now.Before(t.notBefore) || now.Sub(t.at) >= verifiedFor || now.Before(t.at) {
		return "", time.Time{}, false
	}
	return t.sub, t.exp, true
}

func (v *verifiedTokens) put(raw, sub string, exp, notBefore, now time.Time) {
	k := sha256.Sum256([]byte(raw))
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[[sha256.Size]byte]verifiedToken{}
	}
	if len(v.m) >= maxVerified {
		for key := range v.m {
			delete(v.m, key)
			if len(v.m) < maxVerified/2 {
				break
			}
		}
	}
	v.m[k] = verifiedToken{sub: sub, exp: exp, notBefore: notBefore, at: now}
}
