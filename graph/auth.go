package graph

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/taskgraph/taskgraph/dynamo"
)

// Authenticator checks bearer tokens; a token's sub is the viewer's id.
// Tokens must carry exp; alg "none" is never accepted.
type Authenticator struct {
	// Secret verifies HS256 tokens; empty turns HS256 off.
	Secret []byte
	// JWKS verifies asymmetric tokens (RS256/384/512, PS256/384/512,
	// ES256/384/512, EdDSA) by the key their kid names, e.g. keys fetched,
	// cached and refreshed from an identity provider's JWKS URL; nil turns
	// them off.
	JWKS jwt.Keyfunc
	// Issuer and Audience, when set, must match the token's iss and aud.
	Issuer, Audience string
	// Now is the clock used for exp and nbf; defaults to time.Now.
	Now func() time.Time
}

var asymmetric = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

func (a *Authenticator) key(t *jwt.Token) (any, error) {
	if _, ok := t.Method.(*jwt.SigningMethodHMAC); ok {
		return a.Secret, nil
	}
	if a.JWKS == nil {
		return nil, errors.New("no keys for asymmetric tokens")
	}
	return a.JWKS(t)
}

type viewerKey struct{}

type viewerInfo struct {
	id  string
	err error // why the token was refused; nil with an empty id: no token
}

var errNoToken = errors.New("authentication required: send Authorization: Bearer <token>")

// Middleware reads the bearer token of each request. A bad token is
// remembered as such (never treated as anonymous); resolvers and the
// operation gate refuse it with UNAUTHENTICATED.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v viewerInfo
		if h := r.Header.Get("Authorization"); h != "" {
			v.id, v.err = a.Verify(h)
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), viewerKey{}, v)))
	})
}

// Verify checks an Authorization header value and returns the token's sub.
func (a *Authenticator) Verify(header string) (string, error) {
	scheme, raw, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
		return "", errors.New("the Authorization header must be: Bearer <token>")
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	var methods []string
	if len(a.Secret) > 0 {
		methods = append(methods, jwt.SigningMethodHS256.Alg())
	}
	if a.JWKS != nil {
		methods = append(methods, asymmetric...)
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithExpirationRequired(), jwt.WithTimeFunc(now)}
	if a.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(a.Issuer))
	}
	if a.Audience != "" {
		opts = append(opts, jwt.WithAudience(a.Audience))
	}
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(strings.TrimSpace(raw), &claims, a.key, opts...)
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "", errors.New("the token has expired")
	case err != nil:
		return "", errors.New("the token is malformed or not signed by this server")
	}
	if dynamo.ValidUserID(claims.Subject) != nil {
		return "", errors.New("the token's sub is not a valid user id")
	}
	return claims.Subject, nil
}

// Sign makes an HS256 token for sub that expires after ttl (with the
// configured issuer and audience).
func (a *Authenticator) Sign(sub string, ttl time.Duration) (string, error) {
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

// Viewer returns the authenticated viewer's id, or an UNAUTHENTICATED error.
func Viewer(ctx context.Context) (string, error) {
	v, _ := ctx.Value(viewerKey{}).(viewerInfo)
	switch {
	case v.err != nil:
		return "", &authError{v.err}
	case v.id == "":
		return "", &authError{errNoToken}
	}
	return v.id, nil
}

// authError is a refused or missing token.
type authError struct{ err error }

func (e *authError) Error() string { return e.err.Error() }
