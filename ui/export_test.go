package ui

import "github.com/powercontext/powercontext/internal/serverkey"

// SetCandidateScanMax lowers the candidate list's read bound for a test and returns the function that restores it.
// Only a test that does not call t.Parallel may use it (parallel tests resume after it has restored the bound).
func SetCandidateScanMax(n int) (restore func()) {
	old := candidateScanMax
	candidateScanMax = n
	return func() { candidateScanMax = old }
}

// CookieValue is the cookie value of session id under keys (the id followed by its MAC tag, base64url).
func CookieValue(keys *serverkey.Keys, id []byte) string {
	return NewSessions(SessionConfig{Keys: keys}).cookieValue(id)
}
