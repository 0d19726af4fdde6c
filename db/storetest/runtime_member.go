package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// runtimeMemberCases are the cases of pc_runtime_members (runtime_member.sql).
var runtimeMemberCases = []storeCase{
	{"RuntimeMemberUpsert/ListLiveDeletePurge", testRuntimeMember},
	{"RuntimeMemberPurgeExpired/OldestFirstAtMostLimit", testRuntimeMemberPurgeExpiredBatches},
}

func testRuntimeMember(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	member := func(id, role string, expiresIn time.Duration) db.RuntimeMember {
		return db.RuntimeMember{
			MemberID: id, Role: role, BuildVersion: "v1.2.3", SchemaMin: 1, SchemaMax: 20240101000000,
			PayloadMin: 1, PayloadMax: 2, BehaviorRevision: "rev-1",
			StartedAt: now.Add(-time.Hour), HeartbeatAt: now.Add(expiresIn - 30*time.Second),
			ExpiresAt: now.Add(expiresIn),
		}
	}
	live1 := member("member-b", "worker", 30*time.Second)
	live2 := member("member-a", "all", 20*time.Second)
	dead := member("member-c", "api", -time.Minute)
	deader := member("member-d", "scheduler", -time.Hour)
	for _, m := range []db.RuntimeMember{live1, live2, dead, deader} {
		require.NoError(t, s.RuntimeMemberUpsert(ctx, m))
	}

	list, err := s.RuntimeMemberListLive(ctx, now)
	require.NoError(t, err)
	require.ElementsMatch(t, []db.RuntimeMember{live1, live2}, list)

	// Upsert rewrites the row in place.
	live2.HeartbeatAt = now.Add(time.Second)
	live2.ExpiresAt = now.Add(31 * time.Second)
	live2.BehaviorRevision = "rev-2"
	live2.PayloadMax = 3
	require.NoError(t, s.RuntimeMemberUpsert(ctx, live2))
	dead.ExpiresAt = now.Add(time.Minute) // a heartbeat revives an expired member
	require.NoError(t, s.RuntimeMemberUpsert(ctx, dead))
	list, err = s.RuntimeMemberListLive(ctx, now)
	require.NoError(t, err)
	require.ElementsMatch(t, []db.RuntimeMember{live1, live2, dead}, list)

	// Liveness is relative to the time passed in.
	list, err = s.RuntimeMemberListLive(ctx, now.Add(40*time.Second))
	require.NoError(t, err)
	require.ElementsMatch(t, []db.RuntimeMember{dead}, list)

	n, err := s.RuntimeMemberDelete(ctx, live1.MemberID)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.RuntimeMemberDelete(ctx, live1.MemberID)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)

	// Purge removes rows that expired before the cutoff only, at most Limit of them, oldest first.
	n, err = s.RuntimeMemberPurgeExpired(ctx, db.RuntimeMemberPurgeExpiredParams{ExpiredBefore: now.Add(-time.Minute), Limit: 10})
	require.NoError(t, err)
	require.EqualValues(t, 1, n) // deader
	n, err = s.RuntimeMemberPurgeExpired(ctx, db.RuntimeMemberPurgeExpiredParams{ExpiredBefore: now.Add(35 * time.Second), Limit: 10})
	require.NoError(t, err)
	require.EqualValues(t, 1, n) // live2
	list, err = s.RuntimeMemberListLive(ctx, now.Add(-24*time.Hour))
	require.NoError(t, err)
	require.Equal(t, []db.RuntimeMember{dead}, list)
}

func testRuntimeMemberPurgeExpiredBatches(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	// Five expired rows, oldest "m0", and a live one.
	for i, id := range []string{"m0", "m1", "m2", "m3", "m4", "live"} {
		expires := now.Add(time.Duration(i-10) * time.Minute)
		if id == "live" {
			expires = now.Add(time.Hour)
		}
		require.NoError(t, s.RuntimeMemberUpsert(ctx, db.RuntimeMember{
			MemberID: id, Role: "worker", BuildVersion: "v", SchemaMin: 1, SchemaMax: 1, PayloadMin: 1, PayloadMax: 1,
			BehaviorRevision: "r", StartedAt: expires.Add(-time.Hour), HeartbeatAt: expires.Add(-time.Minute), ExpiresAt: expires,
		}))
	}
	left := func() []string {
		list, err := s.RuntimeMemberListLive(ctx, now.Add(-24*time.Hour))
		require.NoError(t, err)
		ids := make([]string, 0, len(list))
		for _, m := range list {
			ids = append(ids, m.MemberID)
		}
		return ids
	}
	p := db.RuntimeMemberPurgeExpiredParams{ExpiredBefore: now, Limit: 2}
	n, err := s.RuntimeMemberPurgeExpired(ctx, p)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	require.Equal(t, []string{"live", "m2", "m3", "m4"}, left(), "the two oldest go first")
	n, err = s.RuntimeMemberPurgeExpired(ctx, p)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	n, err = s.RuntimeMemberPurgeExpired(ctx, p)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.RuntimeMemberPurgeExpired(ctx, p)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, []string{"live"}, left())
}
