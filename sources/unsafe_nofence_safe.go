//go:build !unsafe_nofence

package sources

// unsafeSkipCursorCAS is false in every normal build: Advance always compares and sets (see unsafe_nofence.go).
const unsafeSkipCursorCAS = false
