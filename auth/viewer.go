package auth

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// The request's token: read by Middleware (or the WebSocket transport),
// carried in the request's context, and the viewer it names or why there
// is none.

type viewerKey struct{}

// Token is what a request's bearer token said: the viewer's id and when
// the token expires, or why it was refused.
type Token struct {
	ID  string
	Err error     // why the token was refused; nil with an empty ID: no token
	Exp time.Time // when the token expires (ends subscriptions)
}

// WithToken returns ctx carrying t (Middleware does it for HTTP requests,
// the WebSocket transport at connection_init).
func WithToken(ctx context.Context, t Token) context.Context {
	return context.WithValue(ctx, viewerKey{}, t)
}

// TokenOf returns the token ctx carries (the zero Token: none).
func TokenOf(ctx context.Context) Token {
	t, _ := ctx.Value(viewerKey{}).(Token)
	return t
}

// ErrNoToken is a request's missing token.
var ErrNoToken = errors.New("authentication required: send Authorization: Bearer <token>")

// Middleware reads the bearer token of each request. A bad token is
// remembered as such (never treated as anonymous); resolvers and the
// operation gate refuse it with UNAUTHENTICATED.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v Token
		if h := r.Header.Get("Authorization"); h != "" {
			v.ID, v.Exp, v.Err = a.Check(h)
		}
		next.ServeHTTP(w, r.WithContext(WithToken(r.Context(), v)))
	})
}

// Viewer returns the authenticated viewer's id, or an UNAUTHENTICATED error.
func Viewer(ctx context.Context) (string, error) {
	v := TokenOf(ctx)
	switch {
	case v.Err != nil:
		return "", &Error{v.Err}
	case v.ID == "":
		return "", &Error{ErrNoToken}
	}
	return v.ID, nil
}

// Error is a refused, missing or expired token: UNAUTHENTICATED.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
