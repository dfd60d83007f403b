package cursor

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// MinKey is the least length of a cursor key, in bytes.
const MinKey = 32

// Labels that derive the event cursors' two keys and the sync tokens' key
// from the cursor key, and the cursor key from a secret (DeriveKey).
const (
	eventEncLabel   = "taskgraph live cursor v1: encryption"
	eventNonceLabel = "taskgraph live cursor v1: nonce"
	syncTokenLabel  = "taskgraph sync token v1: encryption"
	keyLabel        = "taskgraph live cursor key v1"
)

// Keys makes and opens the event cursors and sync tokens of one cursor
// key. It is safe for concurrent use.
type Keys struct {
	events   cipher.AEAD // event cursors' (Cursor)
	nonceKey []byte      // their synthetic nonces'
	sync     cipher.AEAD // sync tokens' (SealSync)
}

// New returns the Keys of key, which must hold at least MinKey bytes (the
// server's -cursor-key, or a key derived from its secret). Instances that
// share a stream must share the key: each one reads the cursors and
// tokens the others made.
func New(key []byte) (*Keys, error) {
	if len(key) < MinKey {
		return nil, fmt.Errorf("the cursor key has %d bytes; it needs at least %d", len(key), MinKey)
	}
	events, err := aead(key, eventEncLabel)
	if err != nil {
		return nil, err
	}
	nk, err := hkdf.Key(sha256.New, key, nil, eventNonceLabel, 32)
	if err != nil {
		return nil, err
	}
	sync, err := aead(key, syncTokenLabel)
	if err != nil {
		return nil, err
	}
	return &Keys{events: events, nonceKey: nk, sync: sync}, nil
}

// aead is AES-256-GCM under the key derived from key with label.
func aead(key []byte, label string) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, key, nil, label, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Process returns the Keys of a process without a configured key: a
// random key made once per process, so that the hubs and handlers of one
// process (tests) read each other's cursors and tokens. The server always
// sets a key.
var Process = sync.OnceValue(func() *Keys {
	key := make([]byte, MinKey)
	_, _ = rand.Read(key)
	k, err := New(key)
	if err != nil {
		panic(err) // a 32-byte key is always accepted
	}
	return k
})

// DeriveKey derives a 32-byte cursor key from a secret (HKDF-SHA256, a
// label of its own: the secret's other uses, signing tokens, never meet
// it), so that instances sharing the secret share the key.
func DeriveKey(secret []byte) []byte {
	k, err := hkdf.Key(sha256.New, secret, nil, keyLabel, 32)
	if err != nil {
		panic(err) // 32 bytes of SHA-256 are always available
	}
	return k
}

// ParseKey reads a cursor key as an operator writes it: hex (an even
// number of hex digits), or else base64 (standard or URL alphabet, padded
// or not); at least MinKey bytes. Its errors name neither the key nor
// where it came from.
func ParseKey(v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	k, err := hex.DecodeString(v)
	if err != nil {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if k, err = enc.DecodeString(v); err == nil {
				break
			}
		}
	}
	if err != nil {
		return nil, errors.New("must be base64 or hex")
	}
	if len(k) < MinKey {
		return nil, fmt.Errorf("holds %d bytes; it needs at least %d", len(k), MinKey)
	}
	return k, nil
}
