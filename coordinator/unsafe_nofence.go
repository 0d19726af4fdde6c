//go:build unsafe_nofence

package coordinator

// unsafeSkipFence is true only in the deliberately broken `-tags unsafe_nofence` build used by the e2e harness to
// prove it can fail: Complete then skips the claim (fence) verification. Never ship this build.
const unsafeSkipFence = true
