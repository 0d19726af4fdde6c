// Package storetest is the conformance suite every db.Store adapter runs. It is engine-neutral: it talks only to
// db.Store, never to SQL, so the same assertions hold for PostgreSQL, MySQL/OceanBase and SQLite.
//
// Each subtest calls open(t) for a fresh, isolated, already-migrated store (and may run in parallel with the
// others), so tests never see each other's rows. Times are derived from the database clock (DBNow) wherever a query
// compares against it, and written values carry microseconds so the round trip is checked at that precision.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// RunQueries exercises every db.Queries method (and InTx) against stores returned by open.
func RunQueries(t *testing.T, open func(t *testing.T) db.Store) {
	t.Helper()

	tests := []struct {
		name string
		fn   func(t *testing.T, s db.Store)
	}{
		{"DBNow", testDBNow},
		{"TimeRoundTrip", testTimeRoundTrip},
		{"InTx", testInTx},
		{"WorkLane", testWorkLane},
		{"InsertIfAbsentThenLock", testInsertIfAbsentThenLock},
		{"WorkKey", testWorkKey},
		{"WorkItemInsertGetLock", testWorkItemInsertGetLock},
		{"WorkItemUpdateState", testWorkItemUpdateState},
		{"WorkItemExtendLease", testWorkItemExtendLease},
		{"WorkItemMinLiveSequenceAfter", testWorkItemMinLiveSequenceAfter},
		{"WorkLaneAdvanceHead", testWorkLaneAdvanceHead},
		{"WorkItemClaimCandidates", testWorkItemClaimCandidates},
		{"WorkItemList", testWorkItemList},
		{"WorkItemPurge", testWorkItemPurge},
		{"WorkItemQueueStatistics", testWorkItemQueueStatistics},
		{"WorkAttempt", testWorkAttempt},
		{"SchedulerLease", testSchedulerLease},
		{"SchedulerScan", testSchedulerScan},
		{"RuntimeMember", testRuntimeMember},
		{"RateLimitWindow", testRateLimitWindow},
		{"MemoryRevision", testMemoryRevision},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// clockSlack is how far the database clock may be from the process clock (same host in tests).
const clockSlack = 5 * time.Second

// --- helpers ------------------------------------------------------------------------------------------------------

func randHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n/2)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// us normalises a time the way adapters write it: UTC, truncated to the microsecond.
func us(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func dbNow(t *testing.T, s db.Store) time.Time {
	t.Helper()
	now, err := s.DBNow(context.Background())
	require.NoError(t, err)
	return now
}

func requireUTC(t *testing.T, ts time.Time) {
	t.Helper()
	require.Equal(t, time.UTC, ts.Location(), "times read from the store must be UTC")
}

func requireNear(t *testing.T, want, got time.Time, slack time.Duration) {
	t.Helper()
	d := got.Sub(want)
	if d < 0 {
		d = -d
	}
	require.LessOrEqual(t, d, slack, "want %s, got %s", want, got)
}

// newItem returns a queued item (state_version 1) at the given lane position; created_at and available_at are at.
func newItem(t *testing.T, laneKey string, seq int64, kind string, at time.Time) db.WorkItem {
	t.Helper()
	return db.WorkItem{
		WorkID:         uuid.NewString(),
		LogicalKey:     randHex(t, 64),
		LaneKey:        laneKey,
		LaneSequence:   seq,
		Kind:           kind,
		PayloadVersion: 1,
		ScopeID:        "scope-" + randHex(t, 8),
		Payload:        []byte(`{"after":0,"through":3}`),
		Status:         db.StatusQueued,
		AvailableAt:    us(at),
		MaxAttempts:    5,
		StateVersion:   1,
		CreatedAt:      us(at),
		UpdatedAt:      us(at),
	}
}

func insertItem(t *testing.T, s db.Store, item db.WorkItem) {
	t.Helper()
	require.NoError(t, s.WorkItemInsert(context.Background(), item))
}

// newLaneWithHead creates a lane whose head is head (0 = idle) and whose allocator is past next-1.
func newLaneWithHead(t *testing.T, s db.Store, head, next int64) string {
	t.Helper()
	ctx := context.Background()
	laneKey := randHex(t, 64)
	inserted, err := s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	require.True(t, inserted)
	require.NoError(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: next, HeadSequence: head}))
	return laneKey
}

func ids(items []db.WorkItem) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.WorkID)
	}
	return out
}

// --- clock and transactions ---------------------------------------------------------------------------------------

func testDBNow(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := dbNow(t, s)
	requireUTC(t, now)
	requireNear(t, time.Now(), now, clockSlack)

	// Inside a transaction the clock still advances (clock_timestamp(), not the transaction start).
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		a, err := q.DBNow(ctx)
		require.NoError(t, err)
		requireUTC(t, a)
		requireNear(t, now, a, clockSlack)
		time.Sleep(20 * time.Millisecond)
		b, err := q.DBNow(ctx)
		require.NoError(t, err)
		require.True(t, b.After(a), "database clock must advance inside a transaction: %s then %s", a, b)
		return nil
	}))
}

func testTimeRoundTrip(t *testing.T, s db.Store) {
	ctx := context.Background()
	zone := time.FixedZone("UTC+5:30", 5*3600+30*60)
	// Nanoseconds are truncated to microseconds; the zone is normalised to UTC.
	at := time.Date(2024, 2, 29, 23, 59, 58, 123456789, zone)
	want := time.Date(2024, 2, 29, 18, 29, 58, 123456000, time.UTC)
	require.True(t, us(at).Equal(want))

	item := newItem(t, randHex(t, 64), 1, "k", at)
	item.LeaseExpiresAt = at.Add(time.Microsecond)
	item.CompletedAt = at.Add(2 * time.Microsecond)
	insertItem(t, s, item)

	got, err := s.WorkItemGet(ctx, item.WorkID)
	require.NoError(t, err)
	for _, ts := range []time.Time{got.AvailableAt, got.CreatedAt, got.UpdatedAt, got.LeaseExpiresAt, got.CompletedAt} {
		requireUTC(t, ts)
	}
	require.Equal(t, want, got.AvailableAt)
	require.Equal(t, want, got.CreatedAt)
	require.Equal(t, want.Add(time.Microsecond), got.LeaseExpiresAt)
	require.Equal(t, want.Add(2*time.Microsecond), got.CompletedAt)

	// A time far in the future and one with zero sub-second part round-trip too.
	w := db.RateLimitWindow{
		PrincipalKey:    randHex(t, 64),
		PolicyID:        "p",
		WindowStartedAt: time.Date(2099, 12, 31, 23, 59, 0, 0, time.UTC),
		RequestCount:    1,
		ExpiresAt:       time.Date(2099, 12, 31, 23, 59, 59, 999999000, time.UTC),
	}
	_, err = s.RateLimitWindowInsertIfAbsent(ctx, w)
	require.NoError(t, err)
	var gotW db.RateLimitWindow
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		gotW, err = q.RateLimitWindowLock(ctx, w.PrincipalKey, w.PolicyID, w.WindowStartedAt)
		return err
	}))
	require.Equal(t, w, gotW)
}

func testInTx(t *testing.T, s db.Store) {
	ctx := context.Background()

	// Commit makes writes visible.
	committed := randHex(t, 64)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.WorkLaneInsertIfAbsent(ctx, committed)
		return err
	}))
	_, err := s.WorkLaneGet(ctx, committed)
	require.NoError(t, err)

	// An error rolls back and is returned unchanged.
	rolledBack := randHex(t, 64)
	sentinel := errors.New("boom")
	err = s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		inserted, err := q.WorkLaneInsertIfAbsent(ctx, rolledBack)
		require.NoError(t, err)
		require.True(t, inserted)
		return sentinel
	})
	require.ErrorIs(t, err, sentinel)
	_, err = s.WorkLaneGet(ctx, rolledBack)
	require.ErrorIs(t, err, db.ErrNotFound)

	// A panic rolls back and propagates.
	panicked := randHex(t, 64)
	require.Panics(t, func() {
		_ = s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			_, err := q.WorkLaneInsertIfAbsent(ctx, panicked)
			require.NoError(t, err)
			panic("boom")
		})
	})
	_, err = s.WorkLaneGet(ctx, panicked)
	require.ErrorIs(t, err, db.ErrNotFound)

	// The store is still usable afterwards (the connection was returned clean).
	_, err = s.DBNow(ctx)
	require.NoError(t, err)
}

// --- lanes and keys -----------------------------------------------------------------------------------------------

func testWorkLane(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey := randHex(t, 64)

	_, err := s.WorkLaneGet(ctx, laneKey)
	require.ErrorIs(t, err, db.ErrNotFound)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkLaneLock(ctx, laneKey)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))
	// Updating a lane that does not exist is an error, not a silent no-op.
	require.ErrorIs(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: 2}), db.ErrNotFound)

	inserted, err := s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	require.True(t, inserted)
	inserted, err = s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	require.False(t, inserted)

	lane, err := s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 1, HeadSequence: 0}, lane)

	require.NoError(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: 2, HeadSequence: 1}))
	lane, err = s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 2, HeadSequence: 1}, lane)

	// Head 0 writes NULL (idle) and reads back as 0.
	require.NoError(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: 3}))
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lane, now, err := q.WorkLaneLock(ctx, laneKey)
		require.NoError(t, err)
		require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 3, HeadSequence: 0}, lane)
		requireUTC(t, now)
		requireNear(t, time.Now(), now, clockSlack)
		return nil
	}))

	// A second InsertIfAbsent never resets an existing lane.
	inserted, err = s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	require.False(t, inserted)
	lane, err = s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.EqualValues(t, 3, lane.NextSequence)
}

// testInsertIfAbsentThenLock is the "create a missing row with insert-if-absent, then re-read it with a lock"
// pattern of docs/protocol.md#creating-rows, for each entity that uses it.
func testInsertIfAbsentThenLock(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey := randHex(t, 64)
	leaseName := "lease-" + randHex(t, 8)
	principal := randHex(t, 64)
	windowStart := us(dbNow(t, s)).Truncate(time.Minute)

	run := func(wantInserted bool, wantNext int64, wantFence int64, wantCount int32) {
		t.Helper()
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			inserted, err := q.SchedulerLeaseInsertIfAbsent(ctx, leaseName)
			require.NoError(t, err)
			require.Equal(t, wantInserted, inserted)
			lease, now, err := q.SchedulerLeaseLock(ctx, leaseName)
			require.NoError(t, err)
			require.Equal(t, wantFence, lease.Fence)
			lease.Fence++
			lease.UpdatedAt = now
			require.NoError(t, q.SchedulerLeaseUpdate(ctx, lease))

			inserted, err = q.WorkLaneInsertIfAbsent(ctx, laneKey)
			require.NoError(t, err)
			require.Equal(t, wantInserted, inserted)
			lane, _, err := q.WorkLaneLock(ctx, laneKey)
			require.NoError(t, err)
			require.Equal(t, wantNext, lane.NextSequence)
			lane.NextSequence++
			require.NoError(t, q.WorkLaneUpdate(ctx, lane))

			inserted, err = q.RateLimitWindowInsertIfAbsent(ctx, db.RateLimitWindow{
				PrincipalKey: principal, PolicyID: "api", WindowStartedAt: windowStart,
				RequestCount: 1, ExpiresAt: windowStart.Add(time.Minute),
			})
			require.NoError(t, err)
			require.Equal(t, wantInserted, inserted)
			w, err := q.RateLimitWindowLock(ctx, principal, "api", windowStart)
			require.NoError(t, err)
			require.Equal(t, wantCount, w.RequestCount)
			if !inserted {
				n, err := q.RateLimitWindowIncrement(ctx, principal, "api", windowStart)
				require.NoError(t, err)
				require.EqualValues(t, 1, n)
			}
			return nil
		}))
	}
	run(true, 1, 0, 1)
	run(false, 2, 1, 1)
	run(false, 3, 2, 2)

	lane, err := s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.EqualValues(t, 4, lane.NextSequence)
	lease, err := s.SchedulerLeaseGet(ctx, leaseName)
	require.NoError(t, err)
	require.EqualValues(t, 3, lease.Fence)
}

func testWorkKey(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	key := db.WorkKey{LogicalKey: randHex(t, 64), WorkID: uuid.NewString(), LaneKey: randHex(t, 64), CreatedAt: now}

	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.WorkKeyLock(ctx, key.LogicalKey)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))

	inserted, err := s.WorkKeyInsertIfAbsent(ctx, key)
	require.NoError(t, err)
	require.True(t, inserted)

	// Same logical key, another item: not inserted, the first row stays.
	other := key
	other.WorkID = uuid.NewString()
	inserted, err = s.WorkKeyInsertIfAbsent(ctx, other)
	require.NoError(t, err)
	require.False(t, inserted)

	// Another logical key for the same work id violates the work_id unique key: not inserted either.
	sameWork := key
	sameWork.LogicalKey = randHex(t, 64)
	inserted, err = s.WorkKeyInsertIfAbsent(ctx, sameWork)
	require.NoError(t, err)
	require.False(t, inserted)

	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		got, err := q.WorkKeyLock(ctx, key.LogicalKey)
		require.NoError(t, err)
		require.Equal(t, key, got)
		requireUTC(t, got.CreatedAt)
		return nil
	}))

	n, err := s.WorkKeyDelete(ctx, key.LogicalKey)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.WorkKeyDelete(ctx, key.LogicalKey)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.WorkKeyLock(ctx, key.LogicalKey)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))

	// After the delete the work id is free again (the key is re-creatable).
	inserted, err = s.WorkKeyInsertIfAbsent(ctx, sameWork)
	require.NoError(t, err)
	require.True(t, inserted)
}

// --- work items ---------------------------------------------------------------------------------------------------

func testWorkItemInsertGetLock(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))

	// All nullable columns NULL.
	bare := newItem(t, randHex(t, 64), 1, "powercontext.memory.source-window", now)
	insertItem(t, s, bare)
	got, err := s.WorkItemGet(ctx, bare.WorkID)
	require.NoError(t, err)
	require.Equal(t, bare, got)

	// Every column set.
	full := newItem(t, bare.LaneKey, 2, "powercontext.experience.incubation", now.Add(-time.Hour))
	full.PayloadVersion = 3
	full.ScopeID = "Scope/ü/" + randHex(t, 8)
	full.Status = db.StatusRunning
	full.LeaseOwner = "member-" + randHex(t, 8)
	full.LeaseFence = 7
	full.LeaseExpiresAt = now.Add(30 * time.Second)
	full.AttemptCount = 4
	full.GenerationAttemptCount = 2
	full.RecoveryGeneration = 1
	full.MaxAttempts = 9
	full.CancelRequested = true
	full.ResultCode = "already_committed"
	full.ResultPayload = []byte(`{"entries":2}`)
	full.ErrorCategory = "provider"
	full.ErrorCode = "rate_limited"
	full.StateVersion = 12
	full.UpdatedAt = now.Add(-time.Minute)
	full.CompletedAt = now.Add(-time.Second)
	insertItem(t, s, full)
	got, err = s.WorkItemGet(ctx, full.WorkID)
	require.NoError(t, err)
	require.Equal(t, full, got)

	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		locked, lockNow, err := q.WorkItemLock(ctx, full.WorkID)
		require.NoError(t, err)
		require.Equal(t, full, locked)
		requireUTC(t, lockNow)
		requireNear(t, time.Now(), lockNow, clockSlack)
		require.False(t, lockNow.Before(now), "lock clock %s before earlier DBNow %s", lockNow, now)

		_, _, err = q.WorkItemLock(ctx, uuid.NewString())
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))
	_, err = s.WorkItemGet(ctx, uuid.NewString())
	require.ErrorIs(t, err, db.ErrNotFound)

	// Unique keys: the same work id, or the same (lane_key, lane_sequence), is a conflict.
	dup := newItem(t, randHex(t, 64), 1, "k", now)
	dup.WorkID = bare.WorkID
	require.ErrorIs(t, s.WorkItemInsert(ctx, dup), db.ErrConflict)
	dup = newItem(t, bare.LaneKey, bare.LaneSequence, "k", now)
	require.ErrorIs(t, s.WorkItemInsert(ctx, dup), db.ErrConflict)
}

func testWorkItemUpdateState(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	item := newItem(t, randHex(t, 64), 1, "k", now.Add(-time.Minute))
	insertItem(t, s, item)

	claimed := item
	claimed.Status = db.StatusRunning
	claimed.LeaseOwner = "worker-1"
	claimed.LeaseFence = 1
	claimed.LeaseExpiresAt = now.Add(30 * time.Second)
	claimed.AttemptCount = 1
	claimed.GenerationAttemptCount = 1
	claimed.StateVersion = 2
	claimed.UpdatedAt = now
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkItemLock(ctx, item.WorkID)
		require.NoError(t, err)
		n, err := q.WorkItemUpdateState(ctx, claimed, 1)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		return nil
	}))
	got, err := s.WorkItemGet(ctx, item.WorkID)
	require.NoError(t, err)
	require.Equal(t, claimed, got)

	// A stale expected version changes nothing.
	stale := claimed
	stale.Status = db.StatusCancelled
	stale.StateVersion = 3
	n, err := s.WorkItemUpdateState(ctx, stale, 1)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	got, err = s.WorkItemGet(ctx, item.WorkID)
	require.NoError(t, err)
	require.Equal(t, claimed, got)

	// Every mutable column is written, including back to NULL.
	done := claimed
	done.Status = db.StatusSucceeded
	done.AvailableAt = now.Add(time.Second)
	done.LeaseOwner = ""
	done.LeaseExpiresAt = time.Time{}
	done.LeaseFence = 2
	done.AttemptCount = 2
	done.GenerationAttemptCount = 0
	done.RecoveryGeneration = 1
	done.CancelRequested = true
	done.ResultCode = "ok"
	done.ResultPayload = []byte(`{"n":1}`)
	done.ErrorCategory = "provider"
	done.ErrorCode = "unavailable"
	done.StateVersion = 3
	done.UpdatedAt = now.Add(2 * time.Second)
	done.CompletedAt = now.Add(2 * time.Second)
	n, err = s.WorkItemUpdateState(ctx, done, 2)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	got, err = s.WorkItemGet(ctx, item.WorkID)
	require.NoError(t, err)
	require.Equal(t, done, got)

	cleared := done
	cleared.ResultCode = ""
	cleared.ResultPayload = nil
	cleared.ErrorCategory = ""
	cleared.ErrorCode = ""
	cleared.CompletedAt = time.Time{}
	cleared.CancelRequested = false
	cleared.StateVersion = 4
	n, err = s.WorkItemUpdateState(ctx, cleared, 3)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	got, err = s.WorkItemGet(ctx, item.WorkID)
	require.NoError(t, err)
	require.Equal(t, cleared, got)

	// A missing item changes nothing.
	missing := cleared
	missing.WorkID = uuid.NewString()
	n, err = s.WorkItemUpdateState(ctx, missing, 4)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
}

func testWorkItemExtendLease(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	item := newItem(t, randHex(t, 64), 1, "k", now)
	item.Status = db.StatusRunning
	item.LeaseOwner = "worker-1"
	item.LeaseFence = 3
	item.LeaseExpiresAt = now.Add(10 * time.Second)
	item.AttemptCount = 2
	item.StateVersion = 5
	insertItem(t, s, item)

	valid := db.ExtendLeaseParams{
		WorkID: item.WorkID, LeaseOwner: "worker-1", LeaseFence: 3, AttemptCount: 2,
		LeaseExpiresAt: now.Add(40 * time.Second),
	}
	for name, p := range map[string]db.ExtendLeaseParams{
		"wrong fence":   func() db.ExtendLeaseParams { p := valid; p.LeaseFence = 4; return p }(),
		"wrong owner":   func() db.ExtendLeaseParams { p := valid; p.LeaseOwner = "worker-2"; return p }(),
		"wrong attempt": func() db.ExtendLeaseParams { p := valid; p.AttemptCount = 1; return p }(),
		"missing item":  func() db.ExtendLeaseParams { p := valid; p.WorkID = uuid.NewString(); return p }(),
	} {
		n, err := s.WorkItemExtendLease(ctx, p)
		require.NoError(t, err, name)
		require.EqualValues(t, 0, n, name)
	}
	got, err := s.WorkItemGet(ctx, item.WorkID)
	require.NoError(t, err)
	require.Equal(t, item, got)

	n, err := s.WorkItemExtendLease(ctx, valid)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	got, err = s.WorkItemGet(ctx, item.WorkID)
	require.NoError(t, err)
	require.Equal(t, valid.LeaseExpiresAt, got.LeaseExpiresAt)
	require.Equal(t, item.StateVersion, got.StateVersion, "a heartbeat must not bump state_version")
	require.Equal(t, db.StatusRunning, got.Status)

	// Cancel requested, or no longer running: the heartbeat is refused.
	cancelling := got
	cancelling.Status = db.StatusCancelling
	cancelling.CancelRequested = true
	cancelling.StateVersion = 6
	n, err = s.WorkItemUpdateState(ctx, cancelling, 5)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.WorkItemExtendLease(ctx, valid)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)

	runningCancel := cancelling
	runningCancel.Status = db.StatusRunning
	runningCancel.StateVersion = 7
	n, err = s.WorkItemUpdateState(ctx, runningCancel, 6)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.WorkItemExtendLease(ctx, valid)
	require.NoError(t, err)
	require.EqualValues(t, 0, n, "cancel requested refuses the heartbeat")
}

func testWorkItemMinLiveSequenceAfter(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	laneKey := randHex(t, 64)
	for seq, status := range map[int64]string{
		1: db.StatusSucceeded, 2: db.StatusCancelled, 3: db.StatusFailed, 4: db.StatusCancelled,
		5: db.StatusQueued, 6: db.StatusSucceeded, 7: db.StatusRetryWait,
	} {
		item := newItem(t, laneKey, seq, "k", now)
		item.Status = status
		insertItem(t, s, item)
	}
	// Another lane's live item never counts.
	insertItem(t, s, newItem(t, randHex(t, 64), 2, "k", now))

	for _, tc := range []struct{ after, want int64 }{
		{0, 3}, {1, 3}, {2, 3}, {3, 5}, {4, 5}, {5, 7}, {6, 7}, {7, 0}, {100, 0},
	} {
		got, err := s.WorkItemMinLiveSequenceAfter(ctx, laneKey, tc.after)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "after %d", tc.after)
	}
	got, err := s.WorkItemMinLiveSequenceAfter(ctx, randHex(t, 64), 0)
	require.NoError(t, err)
	require.EqualValues(t, 0, got)
}

func testWorkLaneAdvanceHead(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	laneKey := randHex(t, 64)
	for seq, status := range map[int64]string{
		1: db.StatusSucceeded, 2: db.StatusCancelled, 3: db.StatusFailed, 4: db.StatusCancelled,
		5: db.StatusQueued, 6: db.StatusSucceeded, 7: db.StatusRetryWait,
	} {
		item := newItem(t, laneKey, seq, "k", now)
		item.Status = status
		insertItem(t, s, item)
	}
	// Another lane's live item never counts.
	other := randHex(t, 64)
	insertItem(t, s, newItem(t, other, 2, "k", now))
	_, err := s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	_, err = s.WorkLaneInsertIfAbsent(ctx, other)
	require.NoError(t, err)

	for _, tc := range []struct{ after, want int64 }{
		{0, 3}, {1, 3}, {2, 3}, {3, 5}, {4, 5}, {5, 7}, {6, 7}, {7, 0}, {100, 0},
	} {
		require.NoError(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: 8, HeadSequence: 1}))
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			return q.WorkLaneAdvanceHead(ctx, laneKey, tc.after)
		}))
		lane, err := s.WorkLaneGet(ctx, laneKey)
		require.NoError(t, err)
		require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 8, HeadSequence: tc.want}, lane, "after %d", tc.after)
	}
	otherLane, err := s.WorkLaneGet(ctx, other)
	require.NoError(t, err)
	require.Equal(t, db.WorkLane{LaneKey: other, NextSequence: 1}, otherLane, "other lanes are untouched")
	require.ErrorIs(t, s.WorkLaneAdvanceHead(ctx, randHex(t, 64), 0), db.ErrNotFound)
}

func testWorkItemClaimCandidates(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	const k1, k2, k3, k4 = "kind.one", "kind.two", "kind.three", "kind.four"

	// add inserts an item at lane position seq; the lane's head is set separately.
	add := func(laneKey string, seq int64, kind, status string, availableAgo time.Duration) db.WorkItem {
		item := newItem(t, laneKey, seq, kind, now.Add(-availableAgo))
		item.Status = status
		if status == db.StatusRunning || status == db.StatusCancelling {
			item.LeaseOwner = "worker-x"
			item.LeaseFence = 1
			item.AttemptCount = 1
			item.LeaseExpiresAt = now.Add(-time.Minute) // expired
		}
		insertItem(t, s, item)
		return item
	}

	laneA := newLaneWithHead(t, s, 1, 3)
	a1 := add(laneA, 1, k1, db.StatusQueued, 50*time.Minute)
	add(laneA, 2, k1, db.StatusQueued, 60*time.Minute) // due but not the head
	laneH := newLaneWithHead(t, s, 4, 5)
	add(laneH, 3, k1, db.StatusSucceeded, 70*time.Minute)
	h := add(laneH, 4, k1, db.StatusRetryWait, 40*time.Minute)
	laneD := newLaneWithHead(t, s, 1, 2)
	d := add(laneD, 1, k3, db.StatusRunning, 30*time.Minute) // expired, kind not asked for
	laneF := newLaneWithHead(t, s, 1, 2)
	f := add(laneF, 1, k3, db.StatusCancelling, 20*time.Minute) // expired cancelling
	laneB := newLaneWithHead(t, s, 1, 2)
	b := newItem(t, laneB, 1, k2, now.Add(-10*time.Minute))
	b.PayloadVersion = 2
	insertItem(t, s, b)

	// Never candidates:
	laneC := newLaneWithHead(t, s, 1, 2)
	add(laneC, 1, k1, db.StatusQueued, -time.Hour) // not yet due
	laneE := newLaneWithHead(t, s, 1, 2)
	e := add(laneE, 1, k1, db.StatusRunning, 90*time.Minute)
	e.LeaseExpiresAt = now.Add(time.Hour) // unexpired lease
	e.StateVersion = 2
	n, err := s.WorkItemUpdateState(ctx, e, 1)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	laneG := newLaneWithHead(t, s, 0, 2)
	add(laneG, 1, k1, db.StatusQueued, 80*time.Minute) // idle lane (head NULL)
	laneI := newLaneWithHead(t, s, 1, 2)
	add(laneI, 1, k1, db.StatusFailed, 85*time.Minute) // failed head blocks its lane
	laneJ := newLaneWithHead(t, s, 1, 2)
	add(laneJ, 1, k1, db.StatusSucceeded, 86*time.Minute)
	laneK := newLaneWithHead(t, s, 1, 2)
	add(laneK, 1, k4, db.StatusQueued, 87*time.Minute) // kind never asked for, not expired

	candidateIDs := func(kinds []string, limit int32) []string {
		t.Helper()
		cs, err := s.WorkItemClaimCandidates(ctx, kinds, limit)
		require.NoError(t, err)
		out := make([]string, 0, len(cs))
		for _, c := range cs {
			out = append(out, c.WorkID)
		}
		return out
	}

	require.Equal(t, []string{a1.WorkID, h.WorkID, d.WorkID, f.WorkID}, candidateIDs([]string{k1}, 32))
	require.Equal(t, []string{a1.WorkID, h.WorkID}, candidateIDs([]string{k1}, 2))
	require.Equal(t, []string{d.WorkID, f.WorkID, b.WorkID}, candidateIDs([]string{k2}, 32))
	// Expired heads of any kind are returned even when no kind is asked for.
	require.Equal(t, []string{d.WorkID, f.WorkID}, candidateIDs(nil, 32))
	require.Equal(t, []string{d.WorkID, f.WorkID}, candidateIDs([]string{"unknown"}, 32))

	cs, err := s.WorkItemClaimCandidates(ctx, []string{k2, k3}, 32)
	require.NoError(t, err)
	require.Len(t, cs, 3)
	require.Equal(t, db.ClaimCandidate{
		WorkID: b.WorkID, LaneKey: laneB, LogicalKey: b.LogicalKey, LaneSequence: 1,
		Kind: k2, PayloadVersion: 2, Status: db.StatusQueued,
	}, cs[2])
	require.Equal(t, db.ClaimCandidate{
		WorkID: d.WorkID, LaneKey: laneD, LogicalKey: d.LogicalKey, LaneSequence: 1,
		Kind: k3, PayloadVersion: 1, Status: db.StatusRunning,
	}, cs[0])

	// Due lane heads by (kind, version), whatever kinds a worker supports: a1 and h (k1 v1), b (k2 v2), laneK (k4 v1).
	kvs, err := s.WorkItemHeadKindVersions(ctx)
	require.NoError(t, err)
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].Kind != kvs[j].Kind {
			return kvs[i].Kind < kvs[j].Kind
		}
		return kvs[i].PayloadVersion < kvs[j].PayloadVersion
	})
	require.Equal(t, []db.KindVersionCount{
		{Kind: k4, PayloadVersion: 1, Count: 1},
		{Kind: k1, PayloadVersion: 1, Count: 2},
		{Kind: k2, PayloadVersion: 2, Count: 1},
	}, kvs)
}

func testWorkItemList(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	const kind, otherKind = "kind.listed", "kind.hidden"
	scopeLower, scopeUpper := "scope-a", "SCOPE-A" // byte-exact: these are different scopes

	var all []db.WorkItem
	add := func(scope, itemKind, status string, createdAgo time.Duration) db.WorkItem {
		item := newItem(t, randHex(t, 64), 1, itemKind, now.Add(-createdAgo))
		item.ScopeID = scope
		item.Status = status
		insertItem(t, s, item)
		if item.Kind == kind {
			all = append(all, item)
		}
		return item
	}
	add(scopeLower, kind, db.StatusQueued, 10*time.Minute)
	add(scopeLower, kind, db.StatusFailed, 9*time.Minute)
	add(scopeUpper, kind, db.StatusQueued, 8*time.Minute)
	add(scopeLower, kind, db.StatusSucceeded, 7*time.Minute)
	// Three items created at the same instant: ordered by work_id descending.
	add(scopeLower, kind, db.StatusQueued, 5*time.Minute)
	add(scopeUpper, kind, db.StatusQueued, 5*time.Minute)
	add(scopeLower, kind, db.StatusQueued, 5*time.Minute)
	add(scopeLower, kind, db.StatusRunning, time.Minute+time.Microsecond)
	add(scopeLower, kind, db.StatusQueued, time.Minute)
	hidden := add(scopeLower, otherKind, db.StatusQueued, 30*time.Second)

	sort.Slice(all, func(i, j int) bool {
		if !all[i].CreatedAt.Equal(all[j].CreatedAt) {
			return all[i].CreatedAt.After(all[j].CreatedAt)
		}
		return all[i].WorkID > all[j].WorkID
	})
	filter := func(keep func(db.WorkItem) bool) []string {
		var out []string
		for _, it := range all {
			if keep(it) {
				out = append(out, it.WorkID)
			}
		}
		return out
	}
	// page walks the whole list with the keyset, pageSize rows at a time.
	page := func(p db.WorkItemListParams, pageSize int32) []string {
		t.Helper()
		var out []string
		p.Limit = pageSize
		for i := 0; i < 100; i++ {
			rows, err := s.WorkItemList(ctx, p)
			require.NoError(t, err)
			require.LessOrEqual(t, len(rows), int(pageSize))
			if len(rows) == 0 {
				return out
			}
			out = append(out, ids(rows)...)
			last := rows[len(rows)-1]
			p.BeforeCreatedAt, p.BeforeWorkID = last.CreatedAt, last.WorkID
		}
		t.Fatal("paging did not terminate")
		return nil
	}

	// Everything of the listed kind, newest first; full rows are returned.
	rows, err := s.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{kind}, Limit: 100})
	require.NoError(t, err)
	require.Equal(t, all, rows)

	for _, size := range []int32{1, 2, 3, 100} {
		require.Equal(t, ids(all), page(db.WorkItemListParams{Kinds: []string{kind}}, size), "page size %d", size)
	}

	lower := filter(func(it db.WorkItem) bool { return it.ScopeID == scopeLower })
	require.Len(t, lower, 7)
	require.Equal(t, lower, page(db.WorkItemListParams{Kinds: []string{kind}, ScopeID: scopeLower}, 2))

	queued := filter(func(it db.WorkItem) bool { return it.Status == db.StatusQueued })
	require.Len(t, queued, 6)
	require.Equal(t, queued, page(db.WorkItemListParams{Kinds: []string{kind}, Status: db.StatusQueued}, 2))

	upperQueued := filter(func(it db.WorkItem) bool { return it.ScopeID == scopeUpper && it.Status == db.StatusQueued })
	require.Len(t, upperQueued, 2)
	require.Equal(t, upperQueued,
		page(db.WorkItemListParams{Kinds: []string{kind}, ScopeID: scopeUpper, Status: db.StatusQueued}, 1))

	// Kinds is a real filter.
	rows, err = s.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{otherKind}, Limit: 100})
	require.NoError(t, err)
	require.Equal(t, []string{hidden.WorkID}, ids(rows))
	rows, err = s.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{kind, otherKind}, Limit: 100})
	require.NoError(t, err)
	require.Len(t, rows, len(all)+1)
	require.Equal(t, hidden.WorkID, rows[0].WorkID)
	rows, err = s.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{"nothing"}, Limit: 100})
	require.NoError(t, err)
	require.Empty(t, rows)

	// The keyset is strict: starting at an existing row excludes that row.
	mid := all[4]
	rows, err = s.WorkItemList(ctx, db.WorkItemListParams{
		Kinds: []string{kind}, BeforeCreatedAt: mid.CreatedAt, BeforeWorkID: mid.WorkID, Limit: 100,
	})
	require.NoError(t, err)
	require.Equal(t, ids(all[5:]), ids(rows))
}

func testWorkItemPurge(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	cutoff := now.Add(-24 * time.Hour)

	add := func(status string, completedAgo time.Duration) db.WorkItem {
		item := newItem(t, randHex(t, 64), 1, "k", now.Add(-100*24*time.Hour))
		item.Status = status
		if completedAgo != 0 {
			item.CompletedAt = now.Add(-completedAgo)
		}
		insertItem(t, s, item)
		return item
	}
	oldCancelled := add(db.StatusCancelled, 72*time.Hour)
	oldSucceeded := add(db.StatusSucceeded, 48*time.Hour)
	oldFailed := add(db.StatusFailed, 96*time.Hour) // never purged
	recentSucceeded := add(db.StatusSucceeded, time.Hour)
	queued := add(db.StatusQueued, 0)

	got, err := s.WorkItemPurgeCandidates(ctx, cutoff, 10)
	require.NoError(t, err)
	require.Equal(t, []string{oldCancelled.WorkID, oldSucceeded.WorkID}, got)
	got, err = s.WorkItemPurgeCandidates(ctx, cutoff, 1)
	require.NoError(t, err)
	require.Equal(t, []string{oldCancelled.WorkID}, got)
	got, err = s.WorkItemPurgeCandidates(ctx, now.Add(-1000*time.Hour), 10)
	require.NoError(t, err)
	require.Empty(t, got)

	n, err := s.WorkItemDeleteTerminal(ctx, nil)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)

	// Deleting only deletes items that are still succeeded or cancelled, whatever ids are passed.
	n, err = s.WorkItemDeleteTerminal(ctx, []string{
		oldCancelled.WorkID, oldSucceeded.WorkID, oldFailed.WorkID, recentSucceeded.WorkID, queued.WorkID,
		uuid.NewString(),
	})
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	for _, it := range []db.WorkItem{oldCancelled, oldSucceeded, recentSucceeded} {
		_, err := s.WorkItemGet(ctx, it.WorkID)
		require.ErrorIs(t, err, db.ErrNotFound)
	}
	for _, it := range []db.WorkItem{oldFailed, queued} {
		got, err := s.WorkItemGet(ctx, it.WorkID)
		require.NoError(t, err)
		require.Equal(t, it, got)
	}
	got, err = s.WorkItemPurgeCandidates(ctx, now, 10)
	require.NoError(t, err)
	require.Empty(t, got)
}

func testWorkItemQueueStatistics(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))

	stats, err := s.WorkItemQueueStatistics(ctx)
	require.NoError(t, err)
	require.Empty(t, stats)

	add := func(kind, status string, createdAgo time.Duration) {
		item := newItem(t, randHex(t, 64), 1, kind, now.Add(-createdAgo))
		item.Status = status
		insertItem(t, s, item)
	}
	add("a", db.StatusQueued, time.Minute)
	add("a", db.StatusQueued, 3*time.Minute)
	add("a", db.StatusQueued, 2*time.Minute)
	add("a", db.StatusRunning, 5*time.Minute)
	add("a", db.StatusFailed, 6*time.Minute)
	add("a", db.StatusSucceeded, 7*time.Minute) // terminal: not counted
	add("b", db.StatusCancelled, 8*time.Minute) // terminal: not counted
	add("b", db.StatusRetryWait, 9*time.Minute)
	add("b", db.StatusCancelling, 10*time.Minute)

	stats, err = s.WorkItemQueueStatistics(ctx)
	require.NoError(t, err)
	sort.Slice(stats, func(i, j int) bool {
		if stats[i].Kind != stats[j].Kind {
			return stats[i].Kind < stats[j].Kind
		}
		return stats[i].Status < stats[j].Status
	})
	require.Equal(t, []db.QueueStatistic{
		{Kind: "a", Status: db.StatusFailed, Count: 1, OldestCreatedAt: now.Add(-6 * time.Minute)},
		{Kind: "a", Status: db.StatusQueued, Count: 3, OldestCreatedAt: now.Add(-3 * time.Minute)},
		{Kind: "a", Status: db.StatusRunning, Count: 1, OldestCreatedAt: now.Add(-5 * time.Minute)},
		{Kind: "b", Status: db.StatusCancelling, Count: 1, OldestCreatedAt: now.Add(-10 * time.Minute)},
		{Kind: "b", Status: db.StatusRetryWait, Count: 1, OldestCreatedAt: now.Add(-9 * time.Minute)},
	}, stats)
	for _, st := range stats {
		requireUTC(t, st.OldestCreatedAt)
	}
}

// --- attempts -----------------------------------------------------------------------------------------------------

func testWorkAttempt(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	workID := uuid.NewString()

	_, err := s.WorkAttemptGet(ctx, workID, 1)
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

	got, err := s.WorkAttemptGet(ctx, workID, 1)
	require.NoError(t, err)
	require.Equal(t, first, got)
	got, err = s.WorkAttemptGet(ctx, workID, 2)
	require.NoError(t, err)
	require.Equal(t, second, got)

	// Heartbeat an unfinished attempt.
	hb := now.Add(10 * time.Second)
	n, err := s.WorkAttemptHeartbeat(ctx, workID, 1, hb)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	first.HeartbeatAt = hb
	n, err = s.WorkAttemptHeartbeat(ctx, workID, 9, hb)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)

	// Finish once; the second finish changes nothing.
	fin := db.FinishAttemptParams{
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
	n, err = s.WorkAttemptHeartbeat(ctx, workID, 1, now.Add(time.Hour))
	require.NoError(t, err)
	require.EqualValues(t, 0, n)

	// Finishing without an error writes NULL error columns.
	n, err = s.WorkAttemptFinish(ctx, db.FinishAttemptParams{
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
	got, err = s.WorkAttemptGet(ctx, other.WorkID, 1)
	require.NoError(t, err)
	require.Equal(t, other, got)
}

// --- scheduler ----------------------------------------------------------------------------------------------------

func testSchedulerLease(t *testing.T, s db.Store) {
	ctx := context.Background()
	name := "work-discovery"
	before := dbNow(t, s)

	_, err := s.SchedulerLeaseGet(ctx, name)
	require.ErrorIs(t, err, db.ErrNotFound)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.SchedulerLeaseLock(ctx, name)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))
	require.ErrorIs(t, s.SchedulerLeaseUpdate(ctx, db.SchedulerLease{LeaseName: name, UpdatedAt: before}), db.ErrNotFound)

	inserted, err := s.SchedulerLeaseInsertIfAbsent(ctx, name)
	require.NoError(t, err)
	require.True(t, inserted)
	inserted, err = s.SchedulerLeaseInsertIfAbsent(ctx, name)
	require.NoError(t, err)
	require.False(t, inserted)

	// A new lease is unowned, fence 0, stamped with the database clock.
	lease, err := s.SchedulerLeaseGet(ctx, name)
	require.NoError(t, err)
	require.Equal(t, name, lease.LeaseName)
	require.Empty(t, lease.OwnerID)
	require.Zero(t, lease.Fence)
	require.True(t, lease.LeaseExpiresAt.IsZero())
	requireUTC(t, lease.UpdatedAt)
	requireNear(t, before, lease.UpdatedAt, clockSlack)

	// Acquire under the lock, on the clock read by the lock.
	var acquired db.SchedulerLease
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		l, now, err := q.SchedulerLeaseLock(ctx, name)
		require.NoError(t, err)
		require.Equal(t, lease, l)
		requireUTC(t, now)
		requireNear(t, time.Now(), now, clockSlack)
		require.False(t, now.Before(before))
		acquired = db.SchedulerLease{
			LeaseName: name, OwnerID: "member-1", Fence: l.Fence + 1,
			LeaseExpiresAt: us(now.Add(30 * time.Second)), UpdatedAt: us(now),
		}
		return q.SchedulerLeaseUpdate(ctx, acquired)
	}))
	got, err := s.SchedulerLeaseGet(ctx, name)
	require.NoError(t, err)
	require.Equal(t, acquired, got)

	// Release clears owner and expiry and keeps the fence.
	released := acquired
	released.OwnerID = ""
	released.LeaseExpiresAt = time.Time{}
	released.UpdatedAt = us(acquired.UpdatedAt.Add(time.Second))
	require.NoError(t, s.SchedulerLeaseUpdate(ctx, released))
	got, err = s.SchedulerLeaseGet(ctx, name)
	require.NoError(t, err)
	require.Equal(t, released, got)
	require.EqualValues(t, 1, got.Fence)

	// InsertIfAbsent on an existing lease changes nothing.
	inserted, err = s.SchedulerLeaseInsertIfAbsent(ctx, name)
	require.NoError(t, err)
	require.False(t, inserted)
	got, err = s.SchedulerLeaseGet(ctx, name)
	require.NoError(t, err)
	require.Equal(t, released, got)
}

func testSchedulerScan(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scan := db.SchedulerScan{Discoverer: "memory", NextRunAt: now.Add(time.Minute), StateVersion: 1, UpdatedAt: now}

	_, err := s.SchedulerScanGet(ctx, scan.Discoverer)
	require.ErrorIs(t, err, db.ErrNotFound)

	inserted, err := s.SchedulerScanInsertIfAbsent(ctx, scan)
	require.NoError(t, err)
	require.True(t, inserted)
	again := scan
	again.NextRunAt = now.Add(time.Hour)
	again.Continuation = "zzz"
	inserted, err = s.SchedulerScanInsertIfAbsent(ctx, again)
	require.NoError(t, err)
	require.False(t, inserted)

	got, err := s.SchedulerScanGet(ctx, scan.Discoverer)
	require.NoError(t, err)
	require.Equal(t, scan, got)

	next := db.SchedulerScan{
		Discoverer: scan.Discoverer, NextRunAt: now.Add(2 * time.Minute), Continuation: "scope-0042",
		UpdatedAt: now.Add(time.Second),
	}
	n, err := s.SchedulerScanUpdate(ctx, next, 1)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	next.StateVersion = 2
	got, err = s.SchedulerScanGet(ctx, scan.Discoverer)
	require.NoError(t, err)
	require.Equal(t, next, got)

	// A stale version changes nothing.
	stale := next
	stale.Continuation = "scope-9999"
	n, err = s.SchedulerScanUpdate(ctx, stale, 1)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	got, err = s.SchedulerScanGet(ctx, scan.Discoverer)
	require.NoError(t, err)
	require.Equal(t, next, got)

	// Clearing the continuation writes NULL.
	done := next
	done.Continuation = ""
	done.NextRunAt = now.Add(time.Hour)
	n, err = s.SchedulerScanUpdate(ctx, done, 2)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	done.StateVersion = 3
	got, err = s.SchedulerScanGet(ctx, scan.Discoverer)
	require.NoError(t, err)
	require.Equal(t, done, got)

	n, err = s.SchedulerScanUpdate(ctx, db.SchedulerScan{Discoverer: "missing", NextRunAt: now, UpdatedAt: now}, 1)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
}

// --- membership ---------------------------------------------------------------------------------------------------

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

	// Purge removes rows that expired before the cutoff only.
	n, err = s.RuntimeMemberPurgeExpired(ctx, now.Add(-time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 1, n) // deader
	n, err = s.RuntimeMemberPurgeExpired(ctx, now.Add(35*time.Second))
	require.NoError(t, err)
	require.EqualValues(t, 1, n) // live2
	list, err = s.RuntimeMemberListLive(ctx, now.Add(-24*time.Hour))
	require.NoError(t, err)
	require.Equal(t, []db.RuntimeMember{dead}, list)
}

// --- rate limit ---------------------------------------------------------------------------------------------------

func testRateLimitWindow(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	start := now.Truncate(time.Minute)
	principal := randHex(t, 64)
	w := db.RateLimitWindow{
		PrincipalKey: principal, PolicyID: "api", WindowStartedAt: start, RequestCount: 1,
		ExpiresAt: start.Add(time.Minute),
	}

	lock := func(principal, policy string, start time.Time) (db.RateLimitWindow, error) {
		var got db.RateLimitWindow
		err := s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			var err error
			got, err = q.RateLimitWindowLock(ctx, principal, policy, start)
			return err
		})
		return got, err
	}

	_, err := lock(principal, "api", start)
	require.ErrorIs(t, err, db.ErrNotFound)

	inserted, err := s.RateLimitWindowInsertIfAbsent(ctx, w)
	require.NoError(t, err)
	require.True(t, inserted)
	dup := w
	dup.RequestCount = 50
	inserted, err = s.RateLimitWindowInsertIfAbsent(ctx, dup)
	require.NoError(t, err)
	require.False(t, inserted)

	got, err := lock(principal, "api", start)
	require.NoError(t, err)
	require.Equal(t, w, got)

	// The key is all three columns.
	_, err = lock(principal, "other", start)
	require.ErrorIs(t, err, db.ErrNotFound)
	_, err = lock(principal, "api", start.Add(time.Minute))
	require.ErrorIs(t, err, db.ErrNotFound)

	for i := 0; i < 3; i++ {
		n, err := s.RateLimitWindowIncrement(ctx, principal, "api", start)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	}
	got, err = lock(principal, "api", start)
	require.NoError(t, err)
	require.EqualValues(t, 4, got.RequestCount)
	n, err := s.RateLimitWindowIncrement(ctx, principal, "api", start.Add(time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 0, n)

	// Purge expired windows in batches; unexpired windows stay.
	for i := 1; i <= 3; i++ {
		old := db.RateLimitWindow{
			PrincipalKey: randHex(t, 64), PolicyID: "api", WindowStartedAt: start.Add(-time.Duration(i) * time.Hour),
			RequestCount: 1, ExpiresAt: start.Add(-time.Duration(i)*time.Hour + time.Minute),
		}
		inserted, err := s.RateLimitWindowInsertIfAbsent(ctx, old)
		require.NoError(t, err)
		require.True(t, inserted)
	}
	n, err = s.RateLimitWindowPurgeExpired(ctx, now, 2)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	n, err = s.RateLimitWindowPurgeExpired(ctx, now, 2)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.RateLimitWindowPurgeExpired(ctx, now, 2)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	got, err = lock(principal, "api", start)
	require.NoError(t, err)
	require.EqualValues(t, 4, got.RequestCount)

	n, err = s.RateLimitWindowPurgeExpired(ctx, w.ExpiresAt.Add(time.Microsecond), 10)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	_, err = lock(principal, "api", start)
	require.ErrorIs(t, err, db.ErrNotFound)
}

// --- memory -------------------------------------------------------------------------------------------------------

func testMemoryRevision(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)

	_, err := s.MemoryRevisionLatest(ctx, scope)
	require.ErrorIs(t, err, db.ErrNotFound)
	list, err := s.MemoryRevisionListByScope(ctx, scope)
	require.NoError(t, err)
	require.Empty(t, list)

	rev := func(scope string, n int64) db.MemoryRevision {
		return db.MemoryRevision{
			ScopeID: scope, Revision: n, WorkID: uuid.NewString(), CursorGeneration: 1,
			WindowAfter: (n - 1) * 10, WindowThrough: n * 10, EntryCount: int32(n), CreatedAt: now.Add(time.Duration(n) * time.Second),
		}
	}
	r1, r2, r3 := rev(scope, 1), rev(scope, 2), rev(scope, 3)
	for _, r := range []db.MemoryRevision{r2, r1, r3, rev("SCOPE-other", 9)} {
		require.NoError(t, s.MemoryRevisionInsert(ctx, r))
	}
	require.ErrorIs(t, s.MemoryRevisionInsert(ctx, rev(scope, 2)), db.ErrConflict)

	latest, err := s.MemoryRevisionLatest(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, r3, latest)
	list, err = s.MemoryRevisionListByScope(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, []db.MemoryRevision{r1, r2, r3}, list)
}
