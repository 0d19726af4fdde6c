package handlers

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"time"

	"github.com/google/uuid"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/internal/serverkey"
)

// opCursors seals GET /v1/operations cursors with AES-256-GCM under the key serverkey derives for
// PurposeOperationCursor: a cursor is base64url(nonce ‖ seal(version ‖ created_at µs ‖ work_id)), so a client
// learns nothing from it (not even which operation it follows, which may be one the caller cannot see) and cannot
// forge or alter one. The caller's token binding is the additional data: another principal's cursor is refused.
type opCursors struct{ aead cipher.AEAD }

const (
	opCursorVersion  = 1
	opCursorPlainLen = 1 + 8 + 16
)

func newOpCursors(keys *serverkey.Keys) opCursors {
	block, err := aes.NewCipher(keys.Derive(serverkey.PurposeOperationCursor, 32))
	if err != nil {
		panic("handlers: operation cursor key: " + err.Error()) // only for a key that is not 32 bytes
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("handlers: operation cursor cipher: " + err.Error())
	}
	return opCursors{aead: aead}
}

// cursorBinding is the additional data binding a cursor to the principal that was given it.
func cursorBinding(p *auth.Principal) []byte {
	if p == nil {
		return []byte("operations-cursor:anonymous")
	}
	return []byte("operations-cursor:" + p.Binding())
}

// encode seals the keyset position after (createdAt, workID) for principal p.
func (o opCursors) encode(p *auth.Principal, createdAt time.Time, workID string) string {
	plain := make([]byte, 0, opCursorPlainLen)
	plain = append(plain, opCursorVersion)
	plain = binary.BigEndian.AppendUint64(plain, uint64(createdAt.UnixMicro()))
	id := uuid.MustParse(workID) // work ids are UUIDs the ledger made
	plain = append(plain, id[:]...)
	nonce := make([]byte, o.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("handlers: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(o.aead.Seal(nonce, nonce, plain, cursorBinding(p)))
}

// decode opens a cursor made by encode for the same principal; ok is false for anything else (malformed, altered,
// truncated, sealed under another server secret or for another principal).
func (o opCursors) decode(p *auth.Principal, s string) (createdAt time.Time, workID string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	n := o.aead.NonceSize()
	if err != nil || len(raw) != n+opCursorPlainLen+o.aead.Overhead() {
		return time.Time{}, "", false
	}
	plain, err := o.aead.Open(nil, raw[:n], raw[n:], cursorBinding(p))
	if err != nil || len(plain) != opCursorPlainLen || plain[0] != opCursorVersion {
		return time.Time{}, "", false
	}
	us := int64(binary.BigEndian.Uint64(plain[1:9]))
	if us <= 0 {
		return time.Time{}, "", false
	}
	id, err := uuid.FromBytes(plain[9:])
	if err != nil {
		return time.Time{}, "", false
	}
	return time.UnixMicro(us).UTC(), id.String(), true
}
