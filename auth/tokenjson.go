package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// A token's header and payload are checked as JSON before the token is
// verified: what encoding/json would read leniently (a member named
// twice, a claim spelled in another case, a date with a fraction) is
// refused here.

// registeredClaims are the claims jwt.RegisteredClaims decodes; encoding/json
// matches their names case-insensitively, so no other spelling may appear.
var registeredClaims = []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti"}

// checkTokenJSON checks the header and payload of a compact JWS before it is
// verified: each a JSON object naming no member twice (names compared as
// encoding/json compares them, case-insensitively, at every level), no
// crit header, registered claims spelled exactly, and exp, nbf and iat
// integers.
func checkTokenJSON(raw string) error {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return errMalformed
	}
	var header, payload map[string]json.RawMessage
	for i, dst := range []*map[string]json.RawMessage{&header, &payload} {
		b, err := base64.RawURLEncoding.Strict().DecodeString(parts[i])
		if err != nil {
			return errMalformed
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := uniqueNames(dec); err != nil {
			return err
		}
		if _, err := dec.Token(); err != io.EOF {
			return errMalformed
		}
		if err := json.Unmarshal(b, dst); err != nil || *dst == nil {
			return errMalformed
		}
	}
	if _, ok := header["crit"]; ok {
		return errCrit
	}
	for name := range payload {
		for _, c := range registeredClaims {
			if name != c && strings.EqualFold(name, c) {
				return errMalformed
			}
		}
	}
	for _, c := range []string{"exp", "nbf", "iat"} {
		if v, ok := payload[c]; ok && !integerSeconds(v) {
			return errNumericDate
		}
	}
	return nil
}

// integerSeconds reports whether v is a JSON integer from 0 to 2^53 (no
// string, fraction or exponent; exactly representable as a float64, which
// is how jwt.NumericDate reads it).
func integerSeconds(v json.RawMessage) bool {
	s := string(v)
	if s == "" || len(s) > 16 || s != "0" && s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n <= 1<<53
}

// uniqueNames reads one JSON value from dec and refuses an object, at any
// depth, that names a member twice.
func uniqueNames(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return errMalformed
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	var seen map[string]bool
	if d == '{' {
		seen = map[string]bool{}
	}
	for dec.More() {
		if seen != nil {
			k, err := dec.Token()
			if err != nil {
				return errMalformed
			}
			f := foldName(k.(string))
			if seen[f] {
				return errDuplicate
			}
			seen[f] = true
		}
		if err := uniqueNames(dec); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return errMalformed
	}
	return nil
}

// foldName maps s to one spelling per class of strings.EqualFold, which is
// how encoding/json matches member names to struct fields.
func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		return m
	}, s)
}
