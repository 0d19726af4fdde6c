package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// compositeCases are the cases of the composite ledger steps (db.Queries, "Composite ledger steps"): each must
// behave exactly like its statements run one after the other, inside a transaction (where PostgreSQL pipelines them).
var compositeCases = []storeCase{
	{"WorkLaneItemLock/LocksBothOrNotFound", testWorkLaneItemLock},
	{"WorkLaneKeyDeleteItemLock/DeletesKeyAndLocks", testWorkLaneKeyDeleteItemLock},
	{"WorkItemUpdateStateInsertAttempt/ClaimWrites", testWorkItemUpdateStateInsertAttempt},
	{"WorkItemUpdateStateFinishAttempt/FinishAndAdvance", testWorkItemUpdateStateFinishAttempt},
	{"WorkKeyItemInsert/CreatesOnceThenWritesNothing", testWorkKeyItemInsert},
	{"WorkKeyItemInsert/AnotherLaneRacingForTheKeyWritesNothing", testWorkKeyItemInsertRace},
	{"WorkKeyItemInsertAtCommit/CreatesOnceAtCommit", testWorkKeyItemInsertAtCommit},
	{"WorkKeyItemInsertAtCommit/SecondNeverReorders", testWorkKeyItemInsertAtCommitTwice},
	{"MemoryEntryInsertMany/InsertsAllOrNothing", testMemoryEntryInsertMany},
	{"MemoryEmbeddingUpsertMany/UpsertsAll", testMemoryEmbeddingUpsertMany},
	{"Savepoint/RollsBackOnlyTheFailedPart", testSavepoint},
	{"WorkLaneItemLockSkipLocked/SkipsHeldRows", testWorkLaneItemLockSkipLocked},
}

func testWorkLaneItemLockSkipLocked(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey, items := laneWithItems(t, s, 1)
	p := db.WorkLaneItemLockParams{LaneKey: laneKey, WorkID: items[0].WorkID}
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lane, item, now, err := q.WorkLaneItemLockSkipLocked(ctx, p)
		require.NoError(t, err)
		require.EqualValues(t, 1, lane.HeadSequence)
		require.Equal(t, items[0].WorkID, item.WorkID)
		requireUTC(t, now)
		_, _, _, err = q.WorkLaneItemLockSkipLocked(ctx, db.WorkLaneItemLockParams{LaneKey: laneKey, WorkID: uuid.NewString()})
		require.ErrorIs(t, err, db.ErrNotFound, "missing item")
		return nil
	}))
	if s.Engine() == db.EngineSQLite || !s.SkipLocked() {
		return // one writer: no row is ever held by another transaction
	}
	for name, hold := range map[string]func(ctx context.Context, q db.Queries) error{
		"lane": func(ctx context.Context, q db.Queries) error { _, _, err := q.WorkLaneLock(ctx, laneKey); return err },
		"item": func(ctx context.Context, q db.Queries) error {
			_, _, err := q.WorkItemLock(ctx, items[0].WorkID)
			return err
		},
	} {
		release := holdInTx(t, s, hold)
		start := time.Now()
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			_, _, _, err := q.WorkLaneItemLockSkipLocked(ctx, p)
			require.ErrorIs(t, err, db.ErrNotFound, "held %s is skipped", name)
			return nil
		}))
		require.Less(t, time.Since(start), 3*time.Second, "held %s: no wait", name)
		require.NoError(t, release())
	}
}

func testSavepoint(t *testing.T, s db.Store) {
	ctx := context.Background()
	_, err := s.Savepoint(ctx, func(context.Context, db.Queries) error { return nil })
	require.ErrorIs(t, err, db.ErrNoTransaction)

	a, b, c, d := randHex(t, 64), randHex(t, 64), randHex(t, 64), randHex(t, 64)
	errItem := errors.New("item failed")
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.WorkLaneInsertIfAbsent(ctx, a)
		require.NoError(t, err)
		// fn fails after a write: only its write is undone.
		fnErr, err := q.Savepoint(ctx, func(ctx context.Context, q db.Queries) error {
			_, err := q.WorkLaneInsertIfAbsent(ctx, b)
			require.NoError(t, err)
			return errItem
		})
		require.NoError(t, err)
		require.ErrorIs(t, fnErr, errItem)
		// fn's statement fails in the database (which aborts the transaction on PostgreSQL): the savepoint restores it.
		fnErr, err = q.Savepoint(ctx, func(ctx context.Context, q db.Queries) error {
			return q.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: a, NextSequence: 0}) // violates next_sequence > 0
		})
		require.NoError(t, err)
		require.Error(t, fnErr)
		// fn sends nothing.
		fnErr, err = q.Savepoint(ctx, func(context.Context, db.Queries) error { return nil })
		require.NoError(t, err)
		require.NoError(t, fnErr)
		// fn succeeds: kept.
		fnErr, err = q.Savepoint(ctx, func(ctx context.Context, q db.Queries) error {
			_, err := q.WorkLaneInsertIfAbsent(ctx, c)
			return err
		})
		require.NoError(t, err)
		require.NoError(t, fnErr)
		_, err = q.WorkLaneInsertIfAbsent(ctx, d)
		return err
	}))
	for key, want := range map[string]bool{a: true, b: false, c: true, d: true} {
		_, err := s.WorkLaneGet(ctx, key)
		if want {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, db.ErrNotFound)
		}
	}
	lane, err := s.WorkLaneGet(ctx, a)
	require.NoError(t, err)
	require.EqualValues(t, 1, lane.NextSequence)
}

// laneWithItems creates a lane with items at sequences 1..n (head 1) and their logical keys.
func laneWithItems(t *testing.T, s db.Store, n int) (string, []db.WorkItem) {
	t.Helper()
	ctx := context.Background()
	laneKey := newLaneWithHead(t, s, 1, int64(n)+1)
	now := dbNow(t, s)
	items := make([]db.WorkItem, 0, n)
	for seq := 1; seq <= n; seq++ {
		it := newItem(t, laneKey, int64(seq), "k", now)
		insertItem(t, s, it)
		inserted, err := s.WorkKeyInsertIfAbsent(ctx, db.WorkKey{LogicalKey: it.LogicalKey, WorkID: it.WorkID, LaneKey: laneKey, CreatedAt: us(now)})
		require.NoError(t, err)
		require.True(t, inserted)
		items = append(items, it)
	}
	return laneKey, items
}

func testWorkLaneItemLock(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey, items := laneWithItems(t, s, 1)
	before := dbNow(t, s)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lane, item, now, err := q.WorkLaneItemLock(ctx, db.WorkLaneItemLockParams{LaneKey: laneKey, WorkID: items[0].WorkID})
		require.NoError(t, err)
		require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 2, HeadSequence: 1}, lane)
		require.Equal(t, items[0].WorkID, item.WorkID)
		require.Equal(t, items[0].Payload, item.Payload)
		requireUTC(t, now)
		require.False(t, now.Before(before), "the clock is read while locking")
		return nil
	}))
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, _, err := q.WorkLaneItemLock(ctx, db.WorkLaneItemLockParams{LaneKey: laneKey, WorkID: uuid.NewString()})
		require.ErrorIs(t, err, db.ErrNotFound, "missing item")
		return nil
	}))
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, _, err := q.WorkLaneItemLock(ctx, db.WorkLaneItemLockParams{LaneKey: randHex(t, 64), WorkID: items[0].WorkID})
		require.ErrorIs(t, err, db.ErrNotFound, "missing lane")
		return nil
	}))
}

func testWorkLaneKeyDeleteItemLock(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey, items := laneWithItems(t, s, 2)
	it := items[0]
	// Rolled back: the key is restored.
	errRollback := context.Canceled
	require.ErrorIs(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lane, item, _, err := q.WorkLaneKeyDeleteItemLock(ctx, db.WorkLaneKeyDeleteItemLockParams{LaneKey: laneKey, LogicalKey: it.LogicalKey, WorkID: it.WorkID})
		require.NoError(t, err)
		require.EqualValues(t, 1, lane.HeadSequence)
		require.Equal(t, it.WorkID, item.WorkID)
		_, err = q.WorkKeyLock(ctx, it.LogicalKey)
		require.ErrorIs(t, err, db.ErrNotFound, "deleted inside the transaction")
		return errRollback
	}), errRollback)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		key, err := q.WorkKeyLock(ctx, it.LogicalKey)
		require.NoError(t, err)
		require.Equal(t, it.WorkID, key.WorkID)
		return nil
	}))
	// Committed: only this item's key is gone.
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, _, err := q.WorkLaneKeyDeleteItemLock(ctx, db.WorkLaneKeyDeleteItemLockParams{LaneKey: laneKey, LogicalKey: it.LogicalKey, WorkID: it.WorkID})
		return err
	}))
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.WorkKeyLock(ctx, it.LogicalKey)
		require.ErrorIs(t, err, db.ErrNotFound)
		_, err = q.WorkKeyLock(ctx, items[1].LogicalKey)
		require.NoError(t, err)
		_, _, _, err = q.WorkLaneKeyDeleteItemLock(ctx, db.WorkLaneKeyDeleteItemLockParams{LaneKey: laneKey, LogicalKey: randHex(t, 64), WorkID: uuid.NewString()})
		require.ErrorIs(t, err, db.ErrNotFound, "missing item")
		return nil
	}))
}

// running returns it as claimed by owner (fence and attempt 1) at now.
func running(it db.WorkItem, owner string, now time.Time) db.WorkItem {
	it.Status = db.StatusRunning
	it.LeaseOwner = owner
	it.LeaseFence++
	it.LeaseExpiresAt = us(now.Add(time.Minute))
	it.AttemptCount++
	it.GenerationAttemptCount++
	it.StateVersion++
	it.UpdatedAt = us(now)
	return it
}

func testWorkItemUpdateStateInsertAttempt(t *testing.T, s db.Store) {
	ctx := context.Background()
	_, items := laneWithItems(t, s, 1)
	now := dbNow(t, s)
	claimed := running(items[0], "owner-1", now)
	attempt := db.WorkAttempt{WorkID: claimed.WorkID, AttemptNo: 1, OwnerID: "owner-1", Fence: 1, StartedAt: us(now), TraceID: "t", SpanID: "s"}

	var stale int64
	require.ErrorIs(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		var err error
		stale, err = q.WorkItemUpdateStateInsertAttempt(ctx, db.WorkItemUpdateStateInsertAttemptParams{
			State: db.WorkItemUpdateStateParams{Item: claimed, ExpectedVersion: 7}, Attempt: attempt})
		require.NoError(t, err)
		return context.Canceled // the caller fails the transaction on a guard that did not match
	}), context.Canceled)
	require.EqualValues(t, 0, stale, "a wrong expected version matches no row")
	got, err := s.WorkItemGet(ctx, claimed.WorkID)
	require.NoError(t, err)
	require.Equal(t, db.StatusQueued, got.Status)

	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		n, err := q.WorkItemUpdateStateInsertAttempt(ctx, db.WorkItemUpdateStateInsertAttemptParams{
			State: db.WorkItemUpdateStateParams{Item: claimed, ExpectedVersion: 1}, Attempt: attempt})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		return nil
	}))
	got, err = s.WorkItemGet(ctx, claimed.WorkID)
	require.NoError(t, err)
	require.Equal(t, claimed, got)
	a, err := s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: claimed.WorkID, AttemptNo: 1})
	require.NoError(t, err)
	require.Equal(t, attempt, a)
}

func testWorkItemUpdateStateFinishAttempt(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey, items := laneWithItems(t, s, 3)
	now := dbNow(t, s)
	for i := range items {
		items[i] = running(items[i], "owner-1", now)
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			_, err := q.WorkItemUpdateStateInsertAttempt(ctx, db.WorkItemUpdateStateInsertAttemptParams{
				State:   db.WorkItemUpdateStateParams{Item: items[i], ExpectedVersion: 1},
				Attempt: db.WorkAttempt{WorkID: items[i].WorkID, AttemptNo: 1, OwnerID: "owner-1", Fence: 1, StartedAt: us(now)}})
			return err
		}))
	}
	finish := func(it db.WorkItem, status string, advance bool) db.WorkItem {
		prev := it.StateVersion
		it.Status, it.LeaseOwner, it.LeaseExpiresAt = status, "", time.Time{}
		it.StateVersion++
		it.CompletedAt = us(now)
		p := db.WorkItemUpdateStateFinishAttemptParams{
			State:   db.WorkItemUpdateStateParams{Item: it, ExpectedVersion: prev},
			Attempt: db.WorkAttemptFinishParams{WorkID: it.WorkID, AttemptNo: 1, FinishedAt: us(now), Outcome: status, ErrorCategory: "c", ErrorCode: "e"},
		}
		if advance {
			p.AdvanceHead = &db.WorkLaneAdvanceHeadParams{LaneKey: laneKey, AfterSequence: it.LaneSequence}
		}
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			n, err := q.WorkItemUpdateStateFinishAttempt(ctx, p)
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
			return nil
		}))
		return it
	}
	// The second item succeeds first (no head advance: it is not the head), then the head: the head skips it.
	items[1] = finish(items[1], db.StatusSucceeded, false)
	lane, err := s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.EqualValues(t, 1, lane.HeadSequence)
	items[0] = finish(items[0], db.StatusSucceeded, true)
	lane, err = s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.EqualValues(t, 3, lane.HeadSequence, "advanced past the finished second item")
	for _, it := range items[:2] {
		got, err := s.WorkItemGet(ctx, it.WorkID)
		require.NoError(t, err)
		require.Equal(t, it, got)
		a, err := s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: it.WorkID, AttemptNo: 1})
		require.NoError(t, err)
		require.Equal(t, db.OutcomeSucceeded, a.Outcome)
		require.Equal(t, us(now), a.FinishedAt)
		require.Equal(t, "e", a.ErrorCode)
	}

	// A wrong expected version matches nothing (the caller then fails the transaction).
	stale := items[2]
	stale.Status = db.StatusFailed
	require.ErrorIs(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		n, err := q.WorkItemUpdateStateFinishAttempt(ctx, db.WorkItemUpdateStateFinishAttemptParams{
			State:   db.WorkItemUpdateStateParams{Item: stale, ExpectedVersion: 99},
			Attempt: db.WorkAttemptFinishParams{WorkID: stale.WorkID, AttemptNo: 1, FinishedAt: us(now), Outcome: db.OutcomeFailed},
		})
		require.NoError(t, err)
		require.EqualValues(t, 0, n)
		return context.Canceled
	}), context.Canceled)
	got, err := s.WorkItemGet(ctx, stale.WorkID)
	require.NoError(t, err)
	require.Equal(t, db.StatusRunning, got.Status)

	// Advancing a lane that does not exist is db.ErrNotFound.
	last := items[2]
	last.Status = db.StatusSucceeded
	last.StateVersion++
	require.ErrorIs(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.WorkItemUpdateStateFinishAttempt(ctx, db.WorkItemUpdateStateFinishAttemptParams{
			State:       db.WorkItemUpdateStateParams{Item: last, ExpectedVersion: items[2].StateVersion},
			Attempt:     db.WorkAttemptFinishParams{WorkID: last.WorkID, AttemptNo: 1, FinishedAt: us(now), Outcome: db.OutcomeSucceeded},
			AdvanceHead: &db.WorkLaneAdvanceHeadParams{LaneKey: randHex(t, 64), AfterSequence: 3},
		})
		return err
	}), db.ErrNotFound)

	// The last live item of its lane finishes: the head advances to NULL (the lane is idle).
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		n, err := q.WorkItemUpdateStateFinishAttempt(ctx, db.WorkItemUpdateStateFinishAttemptParams{
			State:       db.WorkItemUpdateStateParams{Item: last, ExpectedVersion: items[2].StateVersion},
			Attempt:     db.WorkAttemptFinishParams{WorkID: last.WorkID, AttemptNo: 1, FinishedAt: us(now), Outcome: db.OutcomeSucceeded},
			AdvanceHead: &db.WorkLaneAdvanceHeadParams{LaneKey: laneKey, AfterSequence: last.LaneSequence},
		})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		return nil
	}))
	lane, err = s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.EqualValues(t, 0, lane.HeadSequence, "no live item left: idle")
	got, err = s.WorkItemGet(ctx, last.WorkID)
	require.NoError(t, err)
	require.Equal(t, db.StatusSucceeded, got.Status)
	a3, err := s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: last.WorkID, AttemptNo: 1})
	require.NoError(t, err)
	require.Equal(t, db.OutcomeSucceeded, a3.Outcome)

	// Without an unfinished attempt to finish (none inserted, or already finished) the item is still written, the
	// attempt is left as it is, and one row (the item) matched.
	_, more := laneWithItems(t, s, 2)
	finishedEarlier := us(now.Add(-time.Second))
	for i := range more {
		more[i] = running(more[i], "owner-2", now)
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			return updateStateOK(ctx, q, more[i], 1)
		}))
	}
	require.NoError(t, s.WorkAttemptInsert(ctx, db.WorkAttempt{WorkID: more[1].WorkID, AttemptNo: 1, OwnerID: "owner-2", Fence: 1,
		StartedAt: finishedEarlier, FinishedAt: finishedEarlier, Outcome: db.OutcomeFailed, ErrorCategory: "x", ErrorCode: "y"}))
	for _, it := range more {
		prev := it.StateVersion
		it.Status, it.LeaseOwner, it.LeaseExpiresAt, it.CompletedAt = db.StatusSucceeded, "", time.Time{}, us(now)
		it.StateVersion++
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			n, err := q.WorkItemUpdateStateFinishAttempt(ctx, db.WorkItemUpdateStateFinishAttemptParams{
				State:   db.WorkItemUpdateStateParams{Item: it, ExpectedVersion: prev},
				Attempt: db.WorkAttemptFinishParams{WorkID: it.WorkID, AttemptNo: 1, FinishedAt: us(now), Outcome: db.OutcomeSucceeded},
			})
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
			return nil
		}))
		got, err := s.WorkItemGet(ctx, it.WorkID)
		require.NoError(t, err)
		require.Equal(t, it, got)
	}
	_, err = s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: more[0].WorkID, AttemptNo: 1})
	require.ErrorIs(t, err, db.ErrNotFound, "no attempt row is created")
	a, err := s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: more[1].WorkID, AttemptNo: 1})
	require.NoError(t, err)
	require.Equal(t, finishedEarlier, a.FinishedAt, "a finished attempt is not finished again")
	require.Equal(t, db.OutcomeFailed, a.Outcome)
	require.Equal(t, "y", a.ErrorCode)
}

// updateStateOK writes it over expected version prev and requires one matched row.
func updateStateOK(ctx context.Context, q db.Queries, it db.WorkItem, prev int64) error {
	n, err := q.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: it, ExpectedVersion: prev})
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("matched %d rows, want 1", n)
	}
	return nil
}

func testWorkKeyItemInsert(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey := newLaneWithHead(t, s, 0, 1)
	now := us(dbNow(t, s))
	item := newItem(t, laneKey, 1, "k", now)
	key := db.WorkKey{LogicalKey: item.LogicalKey, WorkID: item.WorkID, LaneKey: laneKey, CreatedAt: now}
	lane := db.WorkLane{LaneKey: laneKey, NextSequence: 2, HeadSequence: 1}
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkLaneLock(ctx, laneKey)
		require.NoError(t, err)
		inserted, err := q.WorkKeyItemInsert(ctx, db.WorkKeyItemInsertParams{Key: key, Lane: lane, Item: item})
		require.NoError(t, err)
		require.True(t, inserted)
		return nil
	}))
	got, err := s.WorkItemGet(ctx, item.WorkID)
	require.NoError(t, err)
	require.Equal(t, item, got)
	gotLane, err := s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.Equal(t, lane, gotLane)

	// Same logical key again (another work id and position): not inserted, nothing written.
	other := newItem(t, laneKey, 2, "k", now)
	other.LogicalKey = item.LogicalKey
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkLaneLock(ctx, laneKey)
		require.NoError(t, err)
		inserted, err := q.WorkKeyItemInsert(ctx, db.WorkKeyItemInsertParams{
			Key:  db.WorkKey{LogicalKey: other.LogicalKey, WorkID: other.WorkID, LaneKey: laneKey, CreatedAt: now},
			Lane: db.WorkLane{LaneKey: laneKey, NextSequence: 3, HeadSequence: 1},
			Item: other,
		})
		require.NoError(t, err)
		require.False(t, inserted)
		k, err := q.WorkKeyLock(ctx, item.LogicalKey)
		require.NoError(t, err)
		require.Equal(t, key, k)
		return nil
	}))
	_, err = s.WorkItemGet(ctx, other.WorkID)
	require.ErrorIs(t, err, db.ErrNotFound)
	gotLane, err = s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.Equal(t, lane, gotLane)
}

// testWorkKeyItemInsertRace: a transaction of lane B inserts a key that a transaction of lane A inserted and has not
// committed yet (a misuse the coordinator refuses as an identity mismatch). B waits for A, then reports the key as
// existing, writes nothing, and its WorkKeyLock finds A's key.
func testWorkKeyItemInsertRace(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneA, laneB := newLaneWithHead(t, s, 0, 1), newLaneWithHead(t, s, 0, 1)
	now := us(dbNow(t, s))
	itemA, itemB := newItem(t, laneA, 1, "k", now), newItem(t, laneB, 1, "k", now)
	itemB.LogicalKey = itemA.LogicalKey
	params := func(it db.WorkItem) db.WorkKeyItemInsertParams {
		return db.WorkKeyItemInsertParams{
			Key:  db.WorkKey{LogicalKey: it.LogicalKey, WorkID: it.WorkID, LaneKey: it.LaneKey, CreatedAt: now},
			Lane: db.WorkLane{LaneKey: it.LaneKey, NextSequence: 2, HeadSequence: 1},
			Item: it,
		}
	}
	inserted, release, aDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		aDone <- s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, _, err := q.WorkLaneLock(ctx, laneA); err != nil {
				return err
			}
			ok, err := q.WorkKeyItemInsert(ctx, params(itemA))
			if err != nil || !ok {
				return fmt.Errorf("lane A: inserted %v, %w", ok, err)
			}
			close(inserted)
			<-release
			return nil
		})
	}()
	select {
	case <-inserted:
	case err := <-aDone:
		t.Fatalf("lane A's transaction ended early: %v", err)
	}
	type result struct {
		inserted bool
		key      db.WorkKey
		err      error
	}
	bDone := make(chan result, 1)
	go func() {
		var r result
		r.err = s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, _, err := q.WorkLaneLock(ctx, laneB); err != nil {
				return err
			}
			var err error
			if r.inserted, err = q.WorkKeyItemInsert(ctx, params(itemB)); err != nil || r.inserted {
				return err
			}
			r.key, err = q.WorkKeyLock(ctx, itemB.LogicalKey)
			return err
		})
		bDone <- r
	}()
	select {
	case r := <-bDone:
		close(release)
		t.Fatalf("lane B did not wait for lane A's uncommitted key: %+v", r)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-aDone)
	r := <-bDone
	require.NoError(t, r.err)
	require.False(t, r.inserted)
	require.Equal(t, laneA, r.key.LaneKey)
	require.Equal(t, itemA.WorkID, r.key.WorkID)
	_, err := s.WorkItemGet(ctx, itemB.WorkID)
	require.ErrorIs(t, err, db.ErrNotFound)
	lane, err := s.WorkLaneGet(ctx, laneB)
	require.NoError(t, err)
	require.Equal(t, db.WorkLane{LaneKey: laneB, NextSequence: 1}, lane)
}

func testWorkKeyItemInsertAtCommit(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey := newLaneWithHead(t, s, 0, 1)
	now := us(dbNow(t, s))
	item := newItem(t, laneKey, 1, "k", now)
	key := db.WorkKey{LogicalKey: item.LogicalKey, WorkID: item.WorkID, LaneKey: laneKey, CreatedAt: now}
	lane := db.WorkLane{LaneKey: laneKey, NextSequence: 2, HeadSequence: 1}
	inserted := true
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkLaneLock(ctx, laneKey)
		require.NoError(t, err)
		return q.WorkKeyItemInsertAtCommit(ctx, db.WorkKeyItemInsertParams{Key: key, Lane: lane, Item: item}, &inserted)
	}))
	require.True(t, inserted)
	got, err := s.WorkItemGet(ctx, item.WorkID)
	require.NoError(t, err)
	require.Equal(t, item, got)
	gotLane, err := s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.Equal(t, lane, gotLane)

	// Same logical key again: not inserted, nothing of the item written, and the transaction still commits what it
	// wrote before.
	other := newItem(t, laneKey, 2, "k", now)
	other.LogicalKey = item.LogicalKey
	inserted = true
	before := "lane-" + randHex(t, 8)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkLaneLock(ctx, laneKey)
		require.NoError(t, err)
		created, err := q.WorkLaneInsertIfAbsent(ctx, before)
		require.NoError(t, err)
		require.True(t, created)
		return q.WorkKeyItemInsertAtCommit(ctx, db.WorkKeyItemInsertParams{
			Key:  db.WorkKey{LogicalKey: other.LogicalKey, WorkID: other.WorkID, LaneKey: laneKey, CreatedAt: now},
			Lane: db.WorkLane{LaneKey: laneKey, NextSequence: 3, HeadSequence: 1},
			Item: other,
		}, &inserted)
	}))
	require.False(t, inserted)
	_, err = s.WorkItemGet(ctx, other.WorkID)
	require.ErrorIs(t, err, db.ErrNotFound)
	_, err = s.WorkLaneGet(ctx, before)
	require.NoError(t, err, "the write before the joined key was committed")
	gotLane, err = s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.Equal(t, lane, gotLane)

	// A failing write rolls the whole transaction back, including what ran before it.
	dup := newItem(t, laneKey, 1, "k", now) // lane position 1 is taken: the item insert fails
	require.Error(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkLaneLock(ctx, laneKey)
		require.NoError(t, err)
		require.NoError(t, q.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: 9, HeadSequence: 1}))
		return q.WorkKeyItemInsertAtCommit(ctx, db.WorkKeyItemInsertParams{
			Key:  db.WorkKey{LogicalKey: dup.LogicalKey, WorkID: dup.WorkID, LaneKey: laneKey, CreatedAt: now},
			Lane: db.WorkLane{LaneKey: laneKey, NextSequence: 3, HeadSequence: 1},
			Item: dup,
		}, &inserted)
	}))
	gotLane, err = s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.Equal(t, lane, gotLane, "the lane update before the failed write was rolled back")
	_, err = s.WorkItemGet(ctx, dup.WorkID)
	require.ErrorIs(t, err, db.ErrNotFound)
}

// testWorkKeyItemInsertAtCommitTwice: two in one transaction (which the contract forbids) never write the second
// before the first: an engine that deferred the first refuses the second with db.ErrAtCommitTwice and nothing is
// written; one that ran the first at once runs the second after it.
func testWorkKeyItemInsertAtCommitTwice(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey := newLaneWithHead(t, s, 0, 1)
	now := us(dbNow(t, s))
	first, second := newItem(t, laneKey, 1, "k", now), newItem(t, laneKey, 2, "k", now)
	params := func(it db.WorkItem) db.WorkKeyItemInsertParams {
		return db.WorkKeyItemInsertParams{
			Key:  db.WorkKey{LogicalKey: it.LogicalKey, WorkID: it.WorkID, LaneKey: laneKey, CreatedAt: now},
			Lane: db.WorkLane{LaneKey: laneKey, NextSequence: it.LaneSequence + 1, HeadSequence: 1},
			Item: it,
		}
	}
	insertedFirst, insertedSecond := true, true
	err := s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkLaneLock(ctx, laneKey)
		require.NoError(t, err)
		if err := q.WorkKeyItemInsertAtCommit(ctx, params(first), &insertedFirst); err != nil {
			return err
		}
		return q.WorkKeyItemInsertAtCommit(ctx, params(second), &insertedSecond)
	})
	lane, lerr := s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, lerr)
	if errors.Is(err, db.ErrAtCommitTwice) {
		require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 1}, lane, "nothing written")
		for _, it := range []db.WorkItem{first, second} {
			_, err := s.WorkItemGet(ctx, it.WorkID)
			require.ErrorIs(t, err, db.ErrNotFound)
		}
		return
	}
	require.NoError(t, err)
	require.True(t, insertedFirst)
	require.True(t, insertedSecond)
	require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 3, HeadSequence: 1}, lane, "the second ran after the first")
	for _, it := range []db.WorkItem{first, second} {
		_, err := s.WorkItemGet(ctx, it.WorkID)
		require.NoError(t, err)
	}
}

func testMemoryEntryInsertMany(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	var rows []db.MemoryEntry
	for no := int32(1); no <= 300; no++ { // more than one pipelined batch
		rows = append(rows, db.MemoryEntry{ScopeID: scope, Revision: 1, EntryNo: no, Content: "fact " + randHex(t, 4),
			SourcePositions: []byte(`[1]`), CreatedAt: now, EntryID: int64(no)})
	}
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error { return q.MemoryEntryInsertMany(ctx, rows) }))
	got, err := s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 1})
	require.NoError(t, err)
	require.Equal(t, rows, got)

	// A failing row fails the step with the row's error, and the transaction rolls back every row.
	again := []db.MemoryEntry{rows[0], rows[1]}
	again[0].Revision, again[1].Revision = 2, 1 // the second conflicts with revision 1
	err = s.InTx(ctx, func(ctx context.Context, q db.Queries) error { return q.MemoryEntryInsertMany(ctx, again) })
	require.ErrorIs(t, err, db.ErrConflict)
	got, err = s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 2})
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, s.MemoryEntryInsertMany(ctx, nil), "autocommit, nothing to write")
}

func testMemoryEmbeddingUpsertMany(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	var rows []db.MemoryEmbedding
	for no := int32(1); no <= 300; no++ {
		rows = append(rows, embedding(scope, 1, no, "m", now))
	}
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error { return q.MemoryEmbeddingUpsertMany(ctx, rows) }))
	got, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 1})
	require.NoError(t, err)
	require.Equal(t, rows, got)
	// An upsert of another model replaces the rows.
	other := []db.MemoryEmbedding{embedding(scope, 1, 1, "n", now)}
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error { return q.MemoryEmbeddingUpsertMany(ctx, other) }))
	got, err = s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 1})
	require.NoError(t, err)
	require.Len(t, got, 300)
	require.Equal(t, "n", got[0].Model)
}
