package coordinator_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// TestMembershipCheckRollingUpgrade: members that differ but whose schema and payload ranges overlap can work
// together (degraded, still serving); disjoint ranges cannot (misconfigured).
func TestMembershipCheckRollingUpgrade(t *testing.T) {
	old := db.RuntimeMember{Role: "worker", BuildVersion: "v1", SchemaMin: 100, SchemaMax: 100, PayloadMin: 1, PayloadMax: 1, BehaviorRevision: "ledger-1"}
	// the old build after an expand migration was applied: its range reaches the database's version
	oldExpanded := old
	oldExpanded.SchemaMax = 200
	next := db.RuntimeMember{Role: "all", BuildVersion: "v2", SchemaMin: 200, SchemaMax: 200, PayloadMin: 1, PayloadMax: 2, BehaviorRevision: "ledger-2"}
	for _, tc := range []struct {
		name    string
		members []db.RuntimeMember
		state   string
		reason  string
	}{
		{"none", nil, coordinator.ReadyNotReady, "no_live_members"},
		{"one build", []db.RuntimeMember{old, old}, coordinator.ReadyReady, "ok"},
		{"old and new overlap", []db.RuntimeMember{oldExpanded, next}, coordinator.ReadyDegraded, "mixed_versions"},
		{"schema ranges disjoint", []db.RuntimeMember{old, next}, coordinator.ReadyMisconfigured, "version_range_mismatch"},
		{"payload ranges disjoint", []db.RuntimeMember{oldExpanded, func() db.RuntimeMember { m := next; m.PayloadMin = 2; return m }()},
			coordinator.ReadyMisconfigured, "version_range_mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, reason := coordinator.MembershipCheck(tc.members, "worker")
			require.Equal(t, tc.state, state)
			require.Equal(t, tc.reason, reason)
		})
	}
	// A new build joins right after an expand migration, before the old members' next beat re-read the schema:
	// their ranges are stale, not incompatible (degraded); once they beat again, disjoint ranges are a verdict.
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	staleOld, joined := old, next
	staleOld.StartedAt, staleOld.HeartbeatAt = t0, t0.Add(10*time.Second)
	joined.StartedAt, joined.HeartbeatAt = t0.Add(12*time.Second), t0.Add(12*time.Second)
	state, reason := coordinator.MembershipCheck([]db.RuntimeMember{staleOld, joined}, "worker")
	require.Equal(t, coordinator.ReadyDegraded, state)
	require.Equal(t, "schema_refresh_pending", reason)
	beaten := staleOld
	beaten.HeartbeatAt = t0.Add(13 * time.Second) // beat after the new build started and still ends at 100
	state, reason = coordinator.MembershipCheck([]db.RuntimeMember{beaten, joined}, "worker")
	require.Equal(t, coordinator.ReadyMisconfigured, state)
	require.Equal(t, "version_range_mismatch", reason)
	expanded := beaten
	expanded.SchemaMax = 200 // the beat read the expand migration: the ranges meet
	state, reason = coordinator.MembershipCheck([]db.RuntimeMember{expanded, joined}, "worker")
	require.Equal(t, coordinator.ReadyDegraded, state)
	require.Equal(t, "mixed_versions", reason)

	state, reason = coordinator.MembershipCheck([]db.RuntimeMember{oldExpanded}, "api")
	require.Equal(t, coordinator.ReadyDegraded, state)
	require.Equal(t, "no_scheduler", reason, "an api without a scheduler says so before it says mixed")
}
