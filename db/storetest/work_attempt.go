package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// workAttemptCases are the cases of pc_work_attempts (work_attempt.sql).
var workAttemptCases = []storeCase{
	{"WorkAttemptInsert/FinishHeartbeatListDelete", testWorkAttempt},
	{"WorkAttemptCountSnoozed/PerGeneration", testWorkAttemptCountSnoozed},
}

func testWorkAttempt(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	workID := uuid.NewString()

	_, err := s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: workID, AttemptNo: 1})
	require.ErrorIs(t, err, db.ErrNotFound)
	list, err := s.WorkAttemptListByWorkID(ctx, workID)
	require.NoError(t, err)
	require.Empty(t, list)

	first := db.WorkAttempt{
		WorkID: workID, AttemptNo: 1, RecoveryGeneration: 0, OwnerID: "worker-1", Fence: 1,
		StartedAt: now.Add(-time.Minute),
	}
	second := db.WorkAttempt{
		WorkID: workID, AttemptNo: 2, RecoveryGeneration: 1, OwnerID: "worker-2", Fence: 2,
		StartedAt: now, TraceID: randHex(t, 32), SpanID: randHex(t, 16),
	}
	// Inserted out of order; listed by attempt number.
	require.NoError(t, s.WorkAttemptInsert(ctx, second))
	require.NoError(t, s.WorkAttemptInsert(ctx, first))
	require.ErrorIs(t, s.WorkAttemptInsert(ctx, first), db.ErrConflict)
	other := db.WorkAttempt{WorkID: uuid.NewString(), AttemptNo: 1, OwnerID: "worker-3", Fence: 1, StartedAt: now}
	require.NoError(t, s.WorkAttemptInsert(ctx, other))

	got, err := s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: workID, AttemptNo: 1})
	require.NoError(t, err)
	require.Equal(t, first, got)
	got, err = s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: workID, AttemptNo: 2})
	require.NoError(t, err)
	require.Equal(t, second, got)

	// Heartbeat an unfinished attempt.
	hb := now.Add(10 * time.Second)
	n, err := s.WorkAttemptHeartbeat(ctx, db.WorkAttemptHeartbeatParams{WorkID: workID, AttemptNo: 1, HeartbeatAt: hb})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	first.HeartbeatAt = hb
	n, err = s.WorkAttemptHeartbeat(ctx, db.WorkAttemptHeartbeatParams{WorkID: workID, AttemptNo: 9, HeartbeatAt: hb})
	require.NoError(t, err)
	require.EqualValues(t, 0, n)

	// Finish once; the second finish changes nothing.
	fin := db.WorkAttemptFinishParams{
		WorkID: workID, AttemptNo: 1, FinishedAt: now.Add(20 * time.Second), Outcome: db.OutcomeLeaseExpiredRetry,
		ErrorCategory: "lease", ErrorCode: "lease_expired",
	}
	n, err = s.WorkAttemptFinish(ctx, fin)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	first.FinishedAt, first.Outcome, first.ErrorCategory, first.ErrorCode =
		fin.FinishedAt, fin.Outcome, fin.ErrorCategory, fin.ErrorCode
	again := fin
	again.Outcome = db.OutcomeSucceeded
	again.ErrorCategory, again.ErrorCode = "", ""
	n, err = s.WorkAttemptFinish(ctx, again)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	// A finished attempt takes no heartbeat.
	n, err = s.WorkAttemptHeartbeat(ctx, db.WorkAttemptHeartbeatParams{WorkID: workID, AttemptNo: 1, HeartbeatAt: now.Add(time.Hour)})
	require.NoError(t, err)
	require.EqualValues(t, 0, n)

	// Finishing without an error writes NULL error columns.
	n, err = s.WorkAttemptFinish(ctx, db.WorkAttemptFinishParams{
		WorkID: workID, AttemptNo: 2, FinishedAt: now.Add(time.Second), Outcome: db.OutcomeSucceeded,
	})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	second.FinishedAt, second.Outcome = now.Add(time.Second), db.OutcomeSucceeded

	list, err = s.WorkAttemptListByWorkID(ctx, workID)
	require.NoError(t, err)
	require.Equal(t, []db.WorkAttempt{first, second}, list)

	n, err = s.WorkAttemptDeleteByWorkIDs(ctx, nil)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	n, err = s.WorkAttemptDeleteByWorkIDs(ctx, []string{workID, uuid.NewString()})
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	list, err = s.WorkAttemptListByWorkID(ctx, workID)
	require.NoError(t, err)
	require.Empty(t, list)
	got, err = s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: other.WorkID, AttemptNo: 1})
	require.NoError(t, err)
	require.Equal(t, other, got)
}

func testWorkAttemptCountSnoozed(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	workID := uuid.NewString()
	count := func(generation int32) int64 {
		t.Helper()
		n, err := s.WorkAttemptCountSnoozed(ctx, db.WorkAttemptCountSnoozedParams{WorkID: workID, RecoveryGeneration: generation})
		require.NoError(t, err)
		return n
	}
	require.Zero(t, count(0), "no attempts at all")
	outcomes := []struct {
		generation int32
		outcome    string
	}{
		{0, db.OutcomeSnoozed}, {0, db.OutcomeRetryWait}, {0, db.OutcomeSnoozed}, {0, db.OutcomeFailed},
		{1, db.OutcomeSnoozed}, {1, ""}, // the last one is still running (outcome NULL)
	}
	for i, o := range outcomes {
		a := db.WorkAttempt{WorkID: workID, AttemptNo: int32(i + 1), RecoveryGeneration: o.generation, OwnerID: "w", Fence: int64(i + 1),
			StartedAt: now, Outcome: o.outcome}
		if o.outcome != "" {
			a.FinishedAt = now
		}
		require.NoError(t, s.WorkAttemptInsert(ctx, a))
	}
	other := db.WorkAttempt{WorkID: uuid.NewString(), AttemptNo: 1, OwnerID: "w", Fence: 1, StartedAt: now, FinishedAt: now, Outcome: db.OutcomeSnoozed}
	require.NoError(t, s.WorkAttemptInsert(ctx, other))
	require.EqualValues(t, 2, count(0))
	require.EqualValues(t, 1, count(1))
	require.Zero(t, count(2))
}
