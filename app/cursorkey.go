package app

import (
	"errors"
	"fmt"

	"github.com/taskgraph/taskgraph/cursor"
)

// errNeedCursorKey: -production with JWT_JWKS_URL only has no secret to
// derive the cursor key from.
var errNeedCursorKey = errors.New("-production with JWT_JWKS_URL and no JWT_SECRET needs CURSOR_KEY (or -cursor-key): " +
	"at least 32 random bytes, base64 or hex, the same on every instance (e.g. openssl rand -base64 32)")

// configuredCursorKey returns the cursor key (package cursor: the live
// events' cursors and the sync tokens; live.HubConfig.CursorKey) that the
// configuration gives, and where it came from (for the start-up log; never
// the key):
//
//   - CURSOR_KEY / -cursor-key, base64 or hex, at least 32 bytes;
//   - else derived from JWT_SECRET (HKDF-SHA256, its own label), so that
//     instances sharing the secret share the key;
//   - else, for an App given its authenticator (own false: tests), none:
//     the hub's own random key of the process;
//   - else, with -production, none: an error (JWT_JWKS_URL alone gives no
//     shared secret to derive it from);
//   - else (development) none yet: openAuth derives it from the
//     development secret (devCursorKey).
func configuredCursorKey(c Config, own bool) ([]byte, string, error) {
	switch {
	case c.CursorKey != "":
		k, err := parseCursorKey(c.CursorKey)
		if err != nil {
			return nil, "", err
		}
		return k, "CURSOR_KEY", nil
	case c.Secret != "":
		return cursor.DeriveKey([]byte(c.Secret)), "derived from JWT_SECRET", nil
	case !own:
		return nil, "", nil
	case c.Production:
		return nil, "", errNeedCursorKey
	}
	return nil, "", nil
}

// devCursorKey derives the cursor key from the development secret dev (the
// one kept in -data-dir, so restarts keep cursors valid; random per
// process with -data-dir=), which devWhere names.
func devCursorKey(dev []byte, devWhere string) ([]byte, string) {
	return cursor.DeriveKey(dev), "derived from " + devWhere
}

// needsDevSecret reports whether the server uses the development secret:
// for tokens (no JWT_SECRET, no JWT_JWKS_URL) or for the cursor key (no
// JWT_SECRET, no CURSOR_KEY), never with -production.
func needsDevSecret(c Config) bool {
	return !c.Production && c.Secret == "" && (c.JWKSURL == "" || c.CursorKey == "")
}

// parseCursorKey reads CURSOR_KEY (cursor.ParseKey: hex or base64, at
// least cursor.MinKey bytes).
func parseCursorKey(v string) ([]byte, error) {
	k, err := cursor.ParseKey(v)
	if err != nil {
		return nil, fmt.Errorf("CURSOR_KEY (-cursor-key) %w", err)
	}
	return k, nil
}
