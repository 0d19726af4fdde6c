//go:build !unsafe_nofence

package coordinator

// unsafeSkipFence is false in every normal build: Complete always verifies the claim (see unsafe_nofence.go).
const unsafeSkipFence = false
