package app

import (
	"context"
	"fmt"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/taskgraph/taskgraph/auth"
	"golang.org/x/time/rate"
)

// jwksRefresh is how often the JWK Set is fetched again (besides on a
// token whose key it does not know, at most every jwksUnknownKID).
const (
	jwksRefresh    = time.Hour
	jwksUnknownKID = 5 * time.Minute
)

// openAuth makes the App's authenticator from its Config, unless it was
// given one: JWT_SECRET, else the development secret (kept in the data
// directory; made there now if need be), the JWK Set of JWT_JWKS_URL with
// its refresher, the cursor key derived from the development secret when
// nothing else gives one, and the demo token of a development start.
func (a *App) openAuth(ctx context.Context, p *plan) error {
	if a.Auth != nil {
		return nil
	}
	c := a.Config
	var dev []byte
	if needsDevSecret(c) {
		var err error
		if dev, p.devWhere, err = devSecret(c.DataDir); err != nil {
			return err
		}
		if p.cursorKey == nil {
			p.cursorKey, p.cursorWhere = devCursorKey(dev, p.devWhere)
		}
	}
	authn := &auth.Authenticator{Secret: []byte(c.Secret), Issuer: c.Issuer, Audience: c.Audience, MaxLifetime: c.TokenTTL}
	if c.JWKSURL != "" {
		kf, err := a.openJWKS(ctx, c.JWKSURL)
		if err != nil {
			return fmt.Errorf("JWT_JWKS_URL: %w", err)
		}
		authn.JWKS = kf
	}
	if c.Secret == "" && c.JWKSURL == "" {
		authn.Secret = dev // needsDevSecret
		tok, err := authn.Sign("alice", c.TokenTTL)
		if err != nil {
			return err
		}
		a.DemoToken = tok
	}
	a.Auth = authn
	return nil
}

// openJWKS returns the key function of the JWK Set at url: fetched now
// (a failure is logged, and the next token with an unknown key fetches it
// again), again every jwksRefresh by a goroutine that Close stops and
// waits for, and on a token whose key it does not know (at most every
// jwksUnknownKID). keyfunc's own refresher could be stopped but not waited
// for; this one refreshes through the same storage.
func (a *App) openJWKS(ctx context.Context, url string) (jwt.Keyfunc, error) {
	log := a.Log
	ctx, stop := context.WithCancel(ctx)
	opts := jwkset.HTTPClientStorageOptions{Ctx: ctx, Storage: jwkset.NewMemoryStorage(), NoErrorReturnFirstHTTPReq: true,
		RefreshErrorHandler: func(ctx context.Context, err error) {
			log.ErrorContext(ctx, "fetching the JWK Set", "url", url, "err", err)
		}}
	fetched, err := jwkset.NewStorageFromHTTP(url, opts) // the first fetch; no goroutine without RefreshInterval
	if err != nil {
		stop()
		return nil, err
	}
	storage, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{HTTPURLs: map[string]jwkset.Storage{url: fetched},
		RateLimitWaitMax: time.Minute, RefreshUnknownKID: rate.NewLimiter(rate.Every(jwksUnknownKID), 1)})
	if err != nil {
		stop()
		return nil, err
	}
	kf, err := keyfunc.New(keyfunc.Options{Storage: storage}) // its reads outlive a cancelled ctx: requests in flight at shutdown
	if err != nil {
		stop()
		return nil, err
	}
	done := make(chan struct{})
	go func() { defer close(done); refreshJWKS(ctx, url, opts) }()
	a.opened(func() error { stop(); <-done; return nil })
	return kf.Keyfunc, nil
}

// refreshJWKS fetches the JWK Set at url into opts' storage every
// jwksRefresh until ctx ends.
func refreshJWKS(ctx context.Context, url string, opts jwkset.HTTPClientStorageOptions) {
	tick := time.NewTicker(jwksRefresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_, _ = jwkset.NewStorageFromHTTP(url, opts) // one fetch into the same storage; opts' handler logs a failure
		}
	}
}
