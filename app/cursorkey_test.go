package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestCursorKeyComesFromCURSOR_KEYOrIsDerived(t *testing.T) {
	raw := bytes.Repeat([]byte{0xA5}, 32)
	t.Run("CURSOR_KEY in hex and in base64", func(t *testing.T) {
		for _, v := range []string{hex.EncodeToString(raw), base64.StdEncoding.EncodeToString(raw),
			base64.RawURLEncoding.EncodeToString(raw), " " + hex.EncodeToString(raw) + "\n"} {
			k, where, err := configuredCursorKey(Config{CursorKey: v, Secret: "also set", Production: true}, true)
			if err != nil || !bytes.Equal(k, raw) || where != "CURSOR_KEY" {
				t.Errorf("%q: %x from %q, %v; want the key itself", v, k, where, err)
			}
		}
	})
	t.Run("a short or malformed CURSOR_KEY is refused", func(t *testing.T) {
		for _, v := range []string{hex.EncodeToString(raw[:31]), base64.StdEncoding.EncodeToString(raw[:31]), "not a key!", "abc"} {
			if k, _, err := configuredCursorKey(Config{CursorKey: v}, true); err == nil {
				t.Errorf("%q accepted as %x", v, k)
			}
		}
	})
	t.Run("derived from JWT_SECRET, with or without -production", func(t *testing.T) {
		a, where, err := configuredCursorKey(Config{Secret: "s3cret", Production: true}, true)
		if err != nil || len(a) != 32 || !strings.Contains(where, "JWT_SECRET") {
			t.Fatalf("%x from %q, %v", a, where, err)
		}
		b, _, _ := configuredCursorKey(Config{Secret: "s3cret"}, true)
		c, _, _ := configuredCursorKey(Config{Secret: "another"}, true)
		if !bytes.Equal(a, b) || bytes.Equal(a, c) || bytes.Contains(a, []byte("s3cret")) {
			t.Errorf("keys %x, %x, %x: want one key per secret, not the secret", a, b, c)
		}
	})
	t.Run("-production with JWT_JWKS_URL only needs CURSOR_KEY", func(t *testing.T) {
		if k, _, err := configuredCursorKey(Config{Production: true, JWKSURL: "https://idp.example/jwks"}, true); err == nil || !strings.Contains(err.Error(), "CURSOR_KEY") {
			t.Errorf("%x, %v; want an error naming CURSOR_KEY", k, err)
		}
	})
	t.Run("an App given its authenticator and no key: the hub's own", func(t *testing.T) {
		if k, _, err := configuredCursorKey(Config{Production: true}, false); k != nil || err != nil {
			t.Errorf("%x, %v; want none and no error", k, err)
		}
	})
	t.Run("development: derived from the development secret", func(t *testing.T) {
		if !needsDevSecret(Config{JWKSURL: "https://idp.example/jwks"}) || needsDevSecret(Config{JWKSURL: "https://idp.example/jwks", CursorKey: "k"}) ||
			needsDevSecret(Config{Production: true}) || needsDevSecret(Config{Secret: "s"}) {
			t.Error("needsDevSecret is wrong")
		}
		if k, _, err := configuredCursorKey(Config{}, true); k != nil || err != nil {
			t.Fatalf("%x, %v: want none yet (openAuth derives it)", k, err)
		}
		dir := t.TempDir()
		dev, where, err := devSecret(dir)
		if err != nil {
			t.Fatal(err)
		}
		again, _, _ := devSecret(dir) // a restart
		k1, from := devCursorKey(dev, where)
		k2, _ := devCursorKey(again, where)
		if len(k1) != 32 || !bytes.Equal(k1, k2) || bytes.Equal(k1, dev) || !strings.Contains(from, dir) {
			t.Errorf("%x then %x (from %q): want one key across restarts, not the secret", k1, k2, from)
		}
		m1, _, _ := devSecret("")
		m2, _, _ := devSecret("")
		r1, _ := devCursorKey(m1, "")
		r2, _ := devCursorKey(m2, "")
		if bytes.Equal(r1, r2) {
			t.Error("memory only: two processes got the same cursor key")
		}
	})
}

func TestProductionWithJWKSOnlyRefusesToStartWithoutCURSOR_KEY(t *testing.T) {
	env := Env{"JWT_JWKS_URL": "http://127.0.0.1:1/jwks"} // never fetched: the start stops before
	var stderr bytes.Buffer
	err := Run(context.Background(), env, []string{"-production", "-data-dir="}, strings.NewReader(""), io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "CURSOR_KEY") || !strings.Contains(err.Error(), "-production") {
		t.Fatalf("Run = %v; want a refusal naming -production and CURSOR_KEY", err)
	}
	env["CURSOR_KEY"] = "too short"
	if err := Run(context.Background(), env, []string{"-production", "-data-dir="}, strings.NewReader(""), io.Discard, &stderr); err == nil ||
		!strings.Contains(err.Error(), "CURSOR_KEY") {
		t.Fatalf("Run with a bad CURSOR_KEY = %v; want a refusal naming CURSOR_KEY", err)
	}
}

func TestServerLogsWhereTheCursorKeyCameFrom(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	c, err := LoadConfig([]string{"-data-dir=", "-addr=127.0.0.1:0"}, Env{"CURSOR_KEY": key}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := &App{Config: c, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := a.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "cursorkey=CURSOR_KEY") {
		t.Errorf("the start-up log does not say the cursor key came from CURSOR_KEY:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), key) {
		t.Error("the log shows the key")
	}
}

func TestHelpNeverShowsTheCursorKey(t *testing.T) {
	key := hex.EncodeToString(bytes.Repeat([]byte{0x5c}, 32))
	var out bytes.Buffer
	_ = Run(context.Background(), Env{"CURSOR_KEY": key}, []string{"-h"}, strings.NewReader(""), io.Discard, &out)
	if !strings.Contains(out.String(), "-cursor-key") || strings.Contains(out.String(), key) {
		t.Errorf("-h names -cursor-key: %v; shows the key: %v", strings.Contains(out.String(), "-cursor-key"), strings.Contains(out.String(), key))
	}
}
