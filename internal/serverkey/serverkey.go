// Package serverkey derives the HTTP edge's purpose-bound keys (the dashboard cookie's MAC key, the operation
// cursors' encryption key) from one server secret with HKDF-SHA256 (RFC 5869), so no two purposes share a key
// and every API replica configured alike derives the same keys (docs/security.md#server-secret).
package serverkey

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
)

// MinSecretLength is the shortest POWERCONTEXT_SERVER_SECRET accepted (32 characters).
const MinSecretLength = 32

// Purposes: each derives its own key.
const (
	PurposeSessionCookie   = "powercontext/v1/ui-session-cookie-mac"
	PurposeOperationCursor = "powercontext/v1/operations-cursor-aead"
)

// salt separates powercontext's derivations from any other use of the same secret.
var salt = []byte("powercontext server key derivation")

// Keys derives keys from one secret. The zero value and nil are usable: they hold a random per-process secret.
type Keys struct {
	secret []byte
}

// New returns the keys of secret. An empty secret draws a random one (keys then differ per process: a cookie or
// cursor of one process is refused by another and after a restart).
func New(secret []byte) *Keys {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			panic("serverkey: crypto/rand failed: " + err.Error())
		}
	}
	return &Keys{secret: append([]byte(nil), secret...)}
}

// Random returns keys over a fresh random secret.
func Random() *Keys { return New(nil) }

// Derive returns n bytes of key for purpose.
func (k *Keys) Derive(purpose string, n int) []byte {
	key, err := hkdf.Key(sha256.New, k.secret, salt, purpose, n)
	if err != nil {
		panic("serverkey: " + err.Error()) // only for n beyond 255*32 bytes
	}
	return key
}
