package mysqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

func testItem(n int, lane string, seq int64, kind string, at time.Time) db.WorkItem {
	return db.WorkItem{
		WorkID:         fmt.Sprintf("00000000-0000-0000-0000-%012d", n),
		LogicalKey:     fmt.Sprintf("%064d", n),
		LaneKey:        lane,
		LaneSequence:   seq,
		Kind:           kind,
		PayloadVersion: 1,
		ScopeID:        "scope",
		Payload:        []byte(`{"n":1}`),
		Status:         db.StatusQueued,
		AvailableAt:    at,
		MaxAttempts:    5,
		StateVersion:   1,
		CreatedAt:      at,
		UpdatedAt:      at,
	}
}

// TestWorkItemQueries exercises the MySQL work item statements (a subset of the shared conformance suite).
func TestWorkItemQueries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := openFresh(t)
	now, err := store.DBNow(ctx)
	require.NoError(t, err)
	past := now.Add(-time.Minute)

	laneA, laneB := strings.Repeat("a", 64), strings.Repeat("b", 64)
	items := []db.WorkItem{
		testItem(1, laneA, 1, "k1", past),
		testItem(2, laneA, 2, "k1", past.Add(time.Second)),
		testItem(3, laneB, 1, "k2", past.Add(2*time.Second)),
	}
	for _, lane := range []string{laneA, laneB} {
		_, err := store.WorkLaneInsertIfAbsent(ctx, lane)
		require.NoError(t, err)
		require.NoError(t, store.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: lane, NextSequence: 3, HeadSequence: 1}))
	}
	for _, it := range items {
		require.NoError(t, store.WorkItemInsert(ctx, it))
	}
	require.ErrorIs(t, store.WorkItemInsert(ctx, items[0]), db.ErrConflict)

	got, err := store.WorkItemGet(ctx, items[0].WorkID)
	require.NoError(t, err)
	require.Equal(t, items[0].AvailableAt.UTC().Truncate(time.Microsecond), got.AvailableAt)
	require.Nil(t, got.ResultPayload)
	require.True(t, got.LeaseExpiresAt.IsZero())

	cands, err := store.WorkItemClaimCandidates(ctx, []string{"k1", "k2"}, 10)
	require.NoError(t, err)
	require.Len(t, cands, 2)
	require.Equal(t, items[0].WorkID, cands[0].WorkID)
	require.Equal(t, items[2].WorkID, cands[1].WorkID)
	cands, err = store.WorkItemClaimCandidates(ctx, []string{"k2"}, 10)
	require.NoError(t, err)
	require.Len(t, cands, 1)
	cands, err = store.WorkItemClaimCandidates(ctx, nil, 10)
	require.NoError(t, err)
	require.Empty(t, cands)

	kv, err := store.WorkItemHeadKindVersions(ctx)
	require.NoError(t, err)
	require.Equal(t, []db.KindVersionCount{{Kind: "k1", PayloadVersion: 1, Count: 1}, {Kind: "k2", PayloadVersion: 1, Count: 1}}, kv)

	// Claim item 1 with an already expired lease: it becomes an expired candidate of any kind.
	item, dbNow, err := store.WorkItemLock(ctx, items[0].WorkID)
	require.NoError(t, err)
	require.False(t, dbNow.IsZero())
	claimed := item
	claimed.Status = db.StatusRunning
	claimed.LeaseOwner = "w1"
	claimed.LeaseFence = 1
	claimed.AttemptCount = 1
	claimed.LeaseExpiresAt = dbNow.Add(-time.Second)
	claimed.StateVersion = 2
	n, err := store.WorkItemUpdateState(ctx, claimed, 1)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = store.WorkItemUpdateState(ctx, claimed, 1)
	require.NoError(t, err)
	require.Zero(t, n)
	cands, err = store.WorkItemClaimCandidates(ctx, nil, 10)
	require.NoError(t, err)
	require.Len(t, cands, 1)
	require.Equal(t, db.StatusRunning, cands[0].Status)

	ext := db.ExtendLeaseParams{WorkID: claimed.WorkID, LeaseOwner: "w1", LeaseFence: 1, AttemptCount: 1, LeaseExpiresAt: dbNow.Add(time.Minute)}
	n, err = store.WorkItemExtendLease(ctx, ext)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = store.WorkItemExtendLease(ctx, ext) // same value again: still one matched row
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	ext.LeaseFence = 2
	n, err = store.WorkItemExtendLease(ctx, ext)
	require.NoError(t, err)
	require.Zero(t, n)

	seq, err := store.WorkItemMinLiveSequenceAfter(ctx, laneA, 1)
	require.NoError(t, err)
	require.EqualValues(t, 2, seq)
	seq, err = store.WorkItemMinLiveSequenceAfter(ctx, laneA, 2)
	require.NoError(t, err)
	require.Zero(t, seq)

	stats, err := store.WorkItemQueueStatistics(ctx)
	require.NoError(t, err)
	require.Equal(t, []db.QueueStatistic{
		{Kind: "k1", Status: db.StatusQueued, Count: 1, OldestCreatedAt: items[1].CreatedAt.UTC().Truncate(time.Microsecond)},
		{Kind: "k1", Status: db.StatusRunning, Count: 1, OldestCreatedAt: items[0].CreatedAt.UTC().Truncate(time.Microsecond)},
		{Kind: "k2", Status: db.StatusQueued, Count: 1, OldestCreatedAt: items[2].CreatedAt.UTC().Truncate(time.Microsecond)},
	}, stats)

	// List: newest first, keyset, filters.
	list, err := store.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{"k1", "k2"}, Limit: 2})
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, items[2].WorkID, list[0].WorkID)
	require.Equal(t, items[1].WorkID, list[1].WorkID)
	list, err = store.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{"k1", "k2"}, Limit: 2,
		BeforeCreatedAt: list[1].CreatedAt, BeforeWorkID: list[1].WorkID})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, items[0].WorkID, list[0].WorkID)
	list, err = store.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{"k1"}, Status: db.StatusRunning, ScopeID: "scope", Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 1)
	list, err = store.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{"k1"}, ScopeID: "other", Limit: 10})
	require.NoError(t, err)
	require.Empty(t, list)

	// Succeed item 3 and purge it with its attempts.
	done := items[2]
	done.Status = db.StatusSucceeded
	done.CompletedAt = past
	done.ResultCode = "ok"
	done.ResultPayload = []byte(`{}`)
	done.StateVersion = 2
	n, err = store.WorkItemUpdateState(ctx, done, 1)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.NoError(t, store.WorkAttemptInsert(ctx, db.WorkAttempt{WorkID: done.WorkID, AttemptNo: 1, OwnerID: "w", Fence: 1, StartedAt: past}))
	ids, err := store.WorkItemPurgeCandidates(ctx, now, 10)
	require.NoError(t, err)
	require.Equal(t, []string{done.WorkID}, ids)
	n, err = store.WorkItemDeleteTerminal(ctx, append(ids, items[0].WorkID))
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = store.WorkAttemptDeleteByWorkIDs(ctx, ids)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	_, err = store.WorkItemGet(ctx, done.WorkID)
	require.ErrorIs(t, err, db.ErrNotFound)
	_, _, err = store.WorkItemLock(ctx, done.WorkID)
	require.ErrorIs(t, err, db.ErrNotFound)
}

func TestAttemptsMembersRateLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := openFresh(t)
	now, err := store.DBNow(ctx)
	require.NoError(t, err)
	wid := "00000000-0000-0000-0000-000000000001"

	a := db.WorkAttempt{WorkID: wid, AttemptNo: 1, OwnerID: "w", Fence: 1, StartedAt: now, TraceID: "t"}
	require.NoError(t, store.WorkAttemptInsert(ctx, a))
	n, err := store.WorkAttemptHeartbeat(ctx, wid, 1, now.Add(time.Second))
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = store.WorkAttemptFinish(ctx, db.FinishAttemptParams{WorkID: wid, AttemptNo: 1, FinishedAt: now.Add(2 * time.Second), Outcome: db.OutcomeFailed, ErrorCategory: "provider", ErrorCode: "unavailable"})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = store.WorkAttemptFinish(ctx, db.FinishAttemptParams{WorkID: wid, AttemptNo: 1, FinishedAt: now, Outcome: db.OutcomeSucceeded})
	require.NoError(t, err)
	require.Zero(t, n)
	got, err := store.WorkAttemptGet(ctx, wid, 1)
	require.NoError(t, err)
	require.Equal(t, db.OutcomeFailed, got.Outcome)
	require.Equal(t, "t", got.TraceID)
	require.Equal(t, "", got.SpanID)
	list, err := store.WorkAttemptListByWorkID(ctx, wid)
	require.NoError(t, err)
	require.Equal(t, []db.WorkAttempt{got}, list)

	m := db.RuntimeMember{MemberID: "m1", Role: "all", BuildVersion: "v", SchemaMin: 1, SchemaMax: 2, PayloadMin: 1, PayloadMax: 1,
		BehaviorRevision: "r", StartedAt: now, HeartbeatAt: now, ExpiresAt: now.Add(30 * time.Second)}
	require.NoError(t, store.RuntimeMemberUpsert(ctx, m))
	m.HeartbeatAt = now.Add(10 * time.Second)
	require.NoError(t, store.RuntimeMemberUpsert(ctx, m))
	live, err := store.RuntimeMemberListLive(ctx, now)
	require.NoError(t, err)
	require.Len(t, live, 1)
	require.Equal(t, m.HeartbeatAt.UTC().Truncate(time.Microsecond), live[0].HeartbeatAt)
	n, err = store.RuntimeMemberPurgeExpired(ctx, now.Add(time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 1, n)

	pk := strings.Repeat("f", 64)
	w := db.RateLimitWindow{PrincipalKey: pk, PolicyID: "p", WindowStartedAt: now, RequestCount: 1, ExpiresAt: now.Add(time.Minute)}
	ok, err := store.RateLimitWindowInsertIfAbsent(ctx, w)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = store.RateLimitWindowInsertIfAbsent(ctx, w)
	require.NoError(t, err)
	require.False(t, ok)
	err = store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		got, err := q.RateLimitWindowLock(ctx, pk, "p", now)
		require.NoError(t, err)
		require.EqualValues(t, 1, got.RequestCount)
		n, err := q.RateLimitWindowIncrement(ctx, pk, "p", now)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		return nil
	})
	require.NoError(t, err)
	n, err = store.RateLimitWindowPurgeExpired(ctx, now.Add(2*time.Minute), 10)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
}
