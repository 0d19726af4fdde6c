//go:build unsafe_nofence

package coordinator

// unsafeSkipFence is true only in the deliberately broken `-tags unsafe_nofence` build used by the e2e harness to
// prove it can fail: Complete then skips the claim (fence) verification, and CompleteMany takes the per-item path
// (whose finish does not join the unfinished attempt), so the claim check is the guard it removes. Never ship this
// build.
const unsafeSkipFence = true
