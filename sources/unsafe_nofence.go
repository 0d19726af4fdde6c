//go:build unsafe_nofence

package sources

// unsafeSkipCursorCAS is true only in the deliberately broken `-tags unsafe_nofence` build used by the e2e harness
// to prove it can fail: Advance then ignores the cursor compare-and-set. Never ship this build.
const unsafeSkipCursorCAS = true
