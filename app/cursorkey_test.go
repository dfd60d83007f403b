package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"io"
	"strings"
	"testing"
)

func TestCursorKeyComesFromCURSOR_KEYOrIsDerived(t *testing.T) {
	raw := bytes.Repeat([]byte{0xA5}, 32)
	t.Run("CURSOR_KEY in hex and in base64", func(t *testing.T) {
		for _, v := range []string{hex.EncodeToString(raw), base64.StdEncoding.EncodeToString(raw),
			base64.RawURLEncoding.EncodeToString(raw), " " + hex.EncodeToString(raw) + "\n"} {
			k, where, err := cursorKey(settings{cursorKey: v, secret: "also set", production: true}, nil, "")
			if err != nil || !bytes.Equal(k, raw) || where != "CURSOR_KEY" {
				t.Errorf("%q: %x from %q, %v; want the key itself", v, k, where, err)
			}
		}
	})
	t.Run("a short or malformed CURSOR_KEY is refused", func(t *testing.T) {
		for _, v := range []string{hex.EncodeToString(raw[:31]), base64.StdEncoding.EncodeToString(raw[:31]), "not a key!", "abc"} {
			if k, _, err := cursorKey(settings{cursorKey: v}, []byte("dev"), "dev"); err == nil {
				t.Errorf("%q accepted as %x", v, k)
			}
		}
	})
	t.Run("derived from JWT_SECRET, with or without -production", func(t *testing.T) {
		a, where, err := cursorKey(settings{secret: "s3cret", production: true}, nil, "")
		if err != nil || len(a) != 32 || !strings.Contains(where, "JWT_SECRET") {
			t.Fatalf("%x from %q, %v", a, where, err)
		}
		b, _, _ := cursorKey(settings{secret: "s3cret"}, []byte("a development secret"), "dev")
		c, _, _ := cursorKey(settings{secret: "another"}, nil, "")
		if !bytes.Equal(a, b) || bytes.Equal(a, c) || bytes.Contains(a, []byte("s3cret")) {
			t.Errorf("keys %x, %x, %x: want one key per secret, not the secret", a, b, c)
		}
	})
	t.Run("-production with JWT_JWKS_URL only needs CURSOR_KEY", func(t *testing.T) {
		if k, _, err := cursorKey(settings{production: true}, nil, ""); err == nil || !strings.Contains(err.Error(), "CURSOR_KEY") {
			t.Errorf("%x, %v; want an error naming CURSOR_KEY", k, err)
		}
	})
	t.Run("development: derived from the development secret", func(t *testing.T) {
		if !needsDevSecret(settings{}, "https://idp.example/jwks") || needsDevSecret(settings{cursorKey: "k"}, "https://idp.example/jwks") ||
			needsDevSecret(settings{production: true}, "") || needsDevSecret(settings{secret: "s"}, "") {
			t.Error("needsDevSecret is wrong")
		}
		dir := t.TempDir()
		dev, where, err := devSecret(dir)
		if err != nil {
			t.Fatal(err)
		}
		again, _, _ := devSecret(dir) // a restart
		k1, _, err := cursorKey(settings{dataDir: dir}, dev, where)
		k2, _, _ := cursorKey(settings{dataDir: dir}, again, where)
		if err != nil || len(k1) != 32 || !bytes.Equal(k1, k2) || bytes.Equal(k1, dev) {
			t.Errorf("%x then %x (%v): want one key across restarts, not the secret", k1, k2, err)
		}
		m1, _, _ := devSecret("")
		m2, _, _ := devSecret("")
		r1, _, _ := cursorKey(settings{}, m1, "")
		r2, _, _ := cursorKey(settings{}, m2, "")
		if bytes.Equal(r1, r2) {
			t.Error("memory only: two processes got the same cursor key")
		}
	})
}

func TestProductionWithJWKSOnlyRefusesToStartWithoutCURSOR_KEY(t *testing.T) {
	cleanEnv(t)
	t.Setenv("JWT_JWKS_URL", "http://127.0.0.1:1/jwks") // never fetched: the start stops before
	var stderr bytes.Buffer
	err := Run(context.Background(), ReadEnv(), []string{"-production", "-data-dir="}, strings.NewReader(""), io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "CURSOR_KEY") || !strings.Contains(err.Error(), "-production") {
		t.Fatalf("run = %v; want a refusal naming -production and CURSOR_KEY", err)
	}
	t.Setenv("CURSOR_KEY", "too short")
	if err := Run(context.Background(), ReadEnv(), []string{"-production", "-data-dir="}, strings.NewReader(""), io.Discard, &stderr); err == nil ||
		!strings.Contains(err.Error(), "CURSOR_KEY") {
		t.Fatalf("run with a bad CURSOR_KEY = %v; want a refusal naming CURSOR_KEY", err)
	}
}

func TestServerLogsWhereTheCursorKeyCameFrom(t *testing.T) {
	cleanEnv(t)
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	t.Setenv("CURSOR_KEY", key)
	s := mustStart(t, "-data-dir=")
	defer s.stop()
	logs := s.stderr.String()
	if !strings.Contains(logs, "cursorkey=CURSOR_KEY") {
		t.Errorf("the start-up log does not say the cursor key came from CURSOR_KEY:\n%s", logs)
	}
	if strings.Contains(logs, key) {
		t.Error("the log shows the key")
	}
}

func TestHelpNeverShowsTheCursorKey(t *testing.T) {
	cleanEnv(t)
	key := hex.EncodeToString(bytes.Repeat([]byte{0x5c}, 32))
	t.Setenv("CURSOR_KEY", key)
	var out bytes.Buffer
	_ = Run(context.Background(), ReadEnv(), []string{"-h"}, strings.NewReader(""), io.Discard, &out)
	if !strings.Contains(out.String(), "-cursor-key") || strings.Contains(out.String(), key) {
		t.Errorf("-h names -cursor-key: %v; shows the key: %v", strings.Contains(out.String(), "-cursor-key"), strings.Contains(out.String(), key))
	}
}
