package serverkey

import (
	"bytes"
	"testing"
)

// TestDerive: keys are deterministic per secret and purpose, differ across purposes and secrets, and a missing
// secret gives random keys.
func TestDerive(t *testing.T) {
	a := New([]byte("0123456789abcdef0123456789abcdef"))
	b := New([]byte("0123456789abcdef0123456789abcdef"))
	if !bytes.Equal(a.Derive(PurposeSessionCookie, 32), b.Derive(PurposeSessionCookie, 32)) {
		t.Fatal("same secret, same purpose: keys differ")
	}
	if bytes.Equal(a.Derive(PurposeSessionCookie, 32), a.Derive(PurposeOperationCursor, 32)) {
		t.Fatal("two purposes share a key")
	}
	if bytes.Equal(a.Derive(PurposeSessionCookie, 32), New([]byte("another secret of 32 characters!")).Derive(PurposeSessionCookie, 32)) {
		t.Fatal("two secrets share a key")
	}
	if bytes.Equal(Random().Derive(PurposeSessionCookie, 32), Random().Derive(PurposeSessionCookie, 32)) {
		t.Fatal("random keys repeat")
	}
}
