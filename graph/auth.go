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

// Authenticator checks HS256 bearer tokens; a token's sub is the viewer's id.
type Authenticator struct {
	Secret []byte
	// Now is the clock used for exp and nbf; defaults to time.Now.
	Now func() time.Time
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
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(strings.TrimSpace(raw), &claims, func(*jwt.Token) (any, error) { return a.Secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithExpirationRequired(), jwt.WithTimeFunc(now))
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

// Sign makes a token for sub that expires after ttl.
func (a *Authenticator) Sign(sub string, ttl time.Duration) (string, error) {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: sub,
		IssuedAt: jwt.NewNumericDate(now()), ExpiresAt: jwt.NewNumericDate(now().Add(ttl))})
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
