// Package auth checks bearer tokens (JWT: HS256 with a secret, asymmetric
// algorithms with an identity provider's JWK Set), keeps those verified a
// moment ago, and carries the viewer a request's token names in its
// context. graph reads the viewer from it; auth imports nothing of the
// server's but domain.
package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/taskgraph/taskgraph/domain"
)

// Limits on bearer tokens.
const (
	// MaxTokenBytes is the longest token accepted (common proxies refuse
	// longer header lines anyway).
	MaxTokenBytes = 8 << 10
	// ClockSkew is how far a token's iat and nbf may lie in the future, for
	// an issuer whose clock runs ahead; exp gets no leeway.
	ClockSkew = time.Minute
	// DefaultMaxTokenLifetime is the longest lifetime (exp - iat, and exp -
	// now) accepted unless Authenticator.MaxLifetime says otherwise.
	DefaultMaxTokenLifetime = 24 * time.Hour
)

// Authenticator checks bearer tokens; a token's sub is the viewer's id.
// Tokens must carry an integer exp within the lifetime limit; alg "none" is
// never accepted; a header or payload that repeats a name, or a crit header,
// is refused.
type Authenticator struct {
	// Secret verifies HS256 tokens; empty turns HS256 off.
	Secret []byte
	// JWKS verifies asymmetric tokens (RS256/384/512, PS256/384/512,
	// ES256/384/512, EdDSA) by the key their kid names, e.g. keys fetched,
	// cached and refreshed from an identity provider's JWKS URL; nil turns
	// them off. A token without kid is accepted only when exactly one key
	// of the set fits its alg.
	JWKS jwt.Keyfunc
	// Issuer and Audience, when set, must match the token's iss and aud.
	Issuer, Audience string
	// MaxLifetime is the longest token lifetime accepted (and signed);
	// zero means DefaultMaxTokenLifetime.
	MaxLifetime time.Duration
	// Now is the clock used for exp, nbf and iat; defaults to time.Now.
	Now func() time.Time

	// verified remembers tokens verified a moment ago (verifiedTokens);
	// the fields above must not change once requests are served.
	verified verifiedTokens
}

var asymmetric = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

var (
	errMalformed    = errors.New("the token is malformed or not signed by this server")
	errDuplicate    = errors.New("the token's header or claims name a member twice")
	errCrit         = errors.New("the token has a crit header, and this server implements no JWS extension")
	errNumericDate  = errors.New("the token's exp, nbf and iat must be integer NumericDates (whole seconds, at most 2^53)")
	errKidAmbiguous = errors.New("the token names no key (kid) and several keys of the key set fit its alg")
)

func (a *Authenticator) key(t *jwt.Token) (any, error) {
	if _, ok := t.Method.(*jwt.SigningMethodHMAC); ok {
		return a.Secret, nil
	}
	if a.JWKS == nil {
		return nil, errors.New("no keys for asymmetric tokens")
	}
	k, err := a.JWKS(t)
	if err != nil {
		return nil, err
	}
	// Without a kid the key set offers every key it holds: which one signed
	// is then ambiguous, and trying each costs a verification per key.
	if set, ok := k.(jwt.VerificationKeySet); ok {
		var fit []jwt.VerificationKey
		for _, key := range set.Keys {
			if keyFits(t.Method, key) {
				fit = append(fit, key)
			}
		}
		if len(fit) != 1 {
			return nil, errKidAmbiguous
		}
		return fit[0], nil
	}
	return k, nil
}

// keyFits reports whether key can verify tokens signed with m.
func keyFits(m jwt.SigningMethod, key any) bool {
	switch m := m.(type) {
	case *jwt.SigningMethodRSA, *jwt.SigningMethodRSAPSS:
		_, ok := key.(*rsa.PublicKey)
		return ok
	case *jwt.SigningMethodECDSA:
		k, ok := key.(*ecdsa.PublicKey)
		return ok && k.Curve != nil && k.Curve.Params().BitSize == m.CurveBits
	case *jwt.SigningMethodEd25519:
		_, ok := key.(ed25519.PublicKey)
		return ok
	}
	return false
}

func (a *Authenticator) maxLifetime() time.Duration {
	if a.MaxLifetime > 0 {
		return a.MaxLifetime
	}
	return DefaultMaxTokenLifetime
}

// Clock is the Authenticator's clock (Now, or time.Now).
func (a *Authenticator) Clock() func() time.Time {
	if a != nil && a.Now != nil {
		return a.Now
	}
	return time.Now
}

// Verify checks an Authorization header value and returns the token's sub.
func (a *Authenticator) Verify(header string) (string, error) {
	sub, _, err := a.Check(header)
	return sub, err
}

// Check checks an Authorization header value and returns the token's sub
// and expiry.
func (a *Authenticator) Check(header string) (string, time.Time, error) {
	scheme, raw, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
		return "", time.Time{}, errors.New("the Authorization header must be: Bearer <token>")
	}
	raw = strings.TrimSpace(raw)
	if len(raw) > MaxTokenBytes {
		return "", time.Time{}, fmt.Errorf("the token is longer than %d bytes", MaxTokenBytes)
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	if sub, exp, ok := a.verified.get(raw, now()); ok {
		return sub, exp, nil
	}
	sub, exp, nbf, err := a.verifyToken(raw, now)
	if err == nil {
		a.verified.put(raw, sub, exp, nbf, now())
	}
	return sub, exp, err
}

// verifyToken checks a token: its JSON, signature, claims and times. It
// returns the token's sub, its exp and the earliest time at which all its
// time checks pass (nbf and iat less ClockSkew, and the lifetime limit).
func (a *Authenticator) verifyToken(raw string, now func() time.Time) (sub string, exp, notBefore time.Time, err error) {
	if err := checkTokenJSON(raw); err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	var methods []string
	if len(a.Secret) > 0 {
		methods = append(methods, jwt.SigningMethodHS256.Alg())
	}
	if a.JWKS != nil {
		methods = append(methods, asymmetric...)
	}
	// The leeway lets iat and nbf lie up to ClockSkew ahead; exp is checked
	// again below without it.
	opts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithExpirationRequired(), jwt.WithIssuedAt(),
		jwt.WithLeeway(ClockSkew), jwt.WithTimeFunc(now), jwt.WithStrictDecoding()}
	if a.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(a.Issuer))
	}
	if a.Audience != "" {
		opts = append(opts, jwt.WithAudience(a.Audience))
	}
	var claims jwt.RegisteredClaims
	_, err = jwt.ParseWithClaims(raw, &claims, a.key, opts...)
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "", time.Time{}, time.Time{}, errors.New("the token has expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "", time.Time{}, time.Time{}, errors.New("the token is not valid yet (its nbf or iat is in the future)")
	case errors.Is(err, errKidAmbiguous):
		return "", time.Time{}, time.Time{}, errKidAmbiguous
	case err != nil:
		return "", time.Time{}, time.Time{}, errMalformed
	}
	t := now()
	if !t.Before(claims.ExpiresAt.Time) {
		return "", time.Time{}, time.Time{}, errors.New("the token has expired")
	}
	limit := a.maxLifetime()
	if claims.ExpiresAt.Sub(t) > limit+ClockSkew || claims.IssuedAt != nil && claims.ExpiresAt.Sub(claims.IssuedAt.Time) > limit {
		return "", time.Time{}, time.Time{}, fmt.Errorf("the token's lifetime exceeds this server's limit of %s", limit)
	}
	if domain.ValidUserID(claims.Subject) != nil {
		return "", time.Time{}, time.Time{}, errors.New("the token's sub is not a valid user id")
	}
	notBefore = claims.ExpiresAt.Add(-a.maxLifetime() - ClockSkew) // the lifetime check, for a cached token
	for _, d := range []*jwt.NumericDate{claims.NotBefore, claims.IssuedAt} {
		if d != nil && d.Add(-ClockSkew).After(notBefore) {
			notBefore = d.Add(-ClockSkew)
		}
	}
	return claims.Subject, claims.ExpiresAt.Time, notBefore, nil
}

// Sign makes an HS256 token for sub that expires after ttl (with the
// configured issuer and audience); ttl may not exceed the lifetime limit.
func (a *Authenticator) Sign(sub string, ttl time.Duration) (string, error) {
	if ttl > a.maxLifetime() {
		return "", fmt.Errorf("a token lifetime of %s exceeds the limit of %s", ttl, a.maxLifetime())
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	c := jwt.RegisteredClaims{Subject: sub, Issuer: a.Issuer,
		IssuedAt: jwt.NewNumericDate(now()), ExpiresAt: jwt.NewNumericDate(now().Add(ttl))}
	if a.Audience != "" {
		c.Audience = jwt.ClaimStrings{a.Audience}
	}
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	return t.SignedString(a.Secret)
}
