package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// setCases are the cases of the set-based ledger methods ("…Many"): one statement on PostgreSQL, the per-row chain
// (db.Chain…) elsewhere; both are held to the same cases. SkillRevisionInsert is here too: its candidate rows are one
// set statement on MariaDB, MySQL 8 and SQLite and one statement each on OceanBase.
var setCases = []storeCase{
	{"WorkItemClaimMany/ClaimsDueSupportedHeadsOldestFirst", testWorkItemClaimMany},
	{"WorkItemClaimMany/SkipsHeldLanes", testWorkItemClaimManySkipsHeld},
	{"WorkLaneKeyItemLockMany/LocksAndWaits", testWorkLaneKeyItemLockMany},
	{"WorkItemSucceedMany/FinishesTheBatch", testWorkItemSucceedMany},
	{"WorkItemSucceedMany/AfterTheBatchLockOnlyWhatMatched", testWorkItemSucceedManyLocked},
	{"WorkItemSucceedManyAtCommit/AllOrNothing", testWorkItemSucceedManyAtCommit},
	{"EnqueueMany/LocksInsertsNewKeysAndWritesItems", testEnqueueMany},
	{"EnqueueMany/LaneLocksWait", testEnqueueManyLaneLocksWait},
	{"SkillRevisionInsert/DistinctCandidateRowsInSets", testSkillRevisionCandidates},
}

func testWorkItemClaimMany(t *testing.T, s db.Store) {
	sl := s
	ctx := context.Background()
	now := us(dbNow(t, s))
	const k1, k2, k3 = "kind.one", "kind.two", "kind.three"
	add := func(laneKey string, seq int64, kind string, status string, ago time.Duration) db.WorkItem {
		it := newItem(t, laneKey, seq, kind, now.Add(-ago))
		it.Status = status
		if status == db.StatusRunning {
			it.LeaseOwner, it.LeaseFence, it.AttemptCount, it.LeaseExpiresAt = "old", 1, 1, now.Add(-time.Minute)
		}
		insertItem(t, s, it)
		return it
	}
	laneA := newLaneWithHead(t, s, 1, 3)
	a := add(laneA, 1, k1, db.StatusQueued, 50*time.Minute)
	add(laneA, 2, k1, db.StatusQueued, 60*time.Minute) // due, but not the head
	laneH := newLaneWithHead(t, s, 1, 2)
	h := newItem(t, laneH, 1, k1, now.Add(-40*time.Minute)) // a retry with a previous attempt
	h.Status, h.AttemptCount, h.GenerationAttemptCount, h.LeaseFence = db.StatusRetryWait, 1, 1, 1
	insertItem(t, s, h)
	require.NoError(t, s.WorkAttemptInsert(ctx, db.WorkAttempt{WorkID: h.WorkID, AttemptNo: 1, OwnerID: "old", Fence: 1,
		StartedAt: now.Add(-time.Hour), TraceID: "0123456789abcdef0123456789abcdef", SpanID: "0123456789abcdef"}))
	laneB := newLaneWithHead(t, s, 1, 2)
	b := newItem(t, laneB, 1, k2, now.Add(-70*time.Minute)) // oldest, but its payload version is not supported
	b.PayloadVersion = 2
	insertItem(t, s, b)
	laneD := newLaneWithHead(t, s, 1, 2)
	d := add(laneD, 1, k3, db.StatusRunning, 30*time.Minute) // expired lease, a kind not asked for
	laneC := newLaneWithHead(t, s, 1, 2)
	add(laneC, 1, k1, db.StatusQueued, -time.Hour) // not yet due
	laneI := newLaneWithHead(t, s, 1, 2)
	add(laneI, 1, k1, db.StatusFailed, 80*time.Minute) // a failed head blocks its lane

	supported := []db.KindVersions{{Kind: k1, Min: 1, Max: 1}, {Kind: k2, Min: 1, Max: 1}}
	res, err := sl.WorkItemClaimMany(ctx, db.WorkItemClaimManyParams{Supported: supported, Candidates: 32, Slots: 1,
		Owner: "w", Lease: time.Minute, TraceIDs: []string{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, SpanIDs: []string{"bbbbbbbbbbbbbbbb"}})
	require.NoError(t, err)
	requireUTC(t, res.Now)
	require.Len(t, res.Claimed, 1, "never more than the slots")
	got := res.Claimed[0]
	require.Equal(t, a.WorkID, got.Item.WorkID, "the oldest due, supported head")
	want := running(a, "w", res.Now)
	want.LeaseExpiresAt = res.Now.Add(time.Minute)
	require.Equal(t, want, got.Item)
	require.EqualValues(t, 1, got.Slot)
	require.Empty(t, got.PreviousTraceID)
	require.Len(t, res.Expired, 1)
	require.Equal(t, d.WorkID, res.Expired[0].WorkID, "expired heads of any kind are reported")
	stored, err := s.WorkItemGet(ctx, a.WorkID)
	require.NoError(t, err)
	require.Equal(t, got.Item, stored)
	attempts, err := s.WorkAttemptListByWorkID(ctx, a.WorkID)
	require.NoError(t, err)
	require.Equal(t, []db.WorkAttempt{{WorkID: a.WorkID, AttemptNo: 1, OwnerID: "w", Fence: 1, StartedAt: res.Now,
		TraceID: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", SpanID: "bbbbbbbbbbbbbbbb"}}, attempts)

	res, err = sl.WorkItemClaimMany(ctx, db.WorkItemClaimManyParams{Supported: supported, Candidates: 32, Slots: 8,
		Owner: "w2", Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, res.Claimed, 1, "a's lane is running; b's version, c's time and i's failure keep them")
	got = res.Claimed[0]
	require.Equal(t, h.WorkID, got.Item.WorkID)
	require.EqualValues(t, 2, got.Item.LeaseFence, "the fence rises")
	require.EqualValues(t, 2, got.Item.AttemptCount)
	require.EqualValues(t, 0, got.Slot, "no trace ids given")
	require.Equal(t, "0123456789abcdef0123456789abcdef", got.PreviousTraceID)
	require.Equal(t, "0123456789abcdef", got.PreviousSpanID)
	attempt, err := s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: h.WorkID, AttemptNo: 2})
	require.NoError(t, err)
	require.Empty(t, attempt.TraceID)
	require.EqualValues(t, 2, attempt.Fence)

	res, err = sl.WorkItemClaimMany(ctx, db.WorkItemClaimManyParams{Supported: supported, Candidates: 32, Slots: 8, Owner: "w3", Lease: time.Minute})
	require.NoError(t, err)
	require.Empty(t, res.Claimed)
}

func testWorkItemClaimManySkipsHeld(t *testing.T, s db.Store) {
	if s.Engine() == db.EngineSQLite || !s.SkipLocked() {
		t.Skipf("%s: another transaction cannot hold a row while this one runs without waiting", s.Engine())
	}
	ctx := context.Background()
	now := dbNow(t, s)
	var lanes []string
	for i := range 3 {
		lane := newLaneWithHead(t, s, 1, 2)
		insertItem(t, s, newItem(t, lane, 1, "k", now.Add(time.Duration(i-10)*time.Minute)))
		lanes = append(lanes, lane)
	}
	for name, hold := range map[string]func(ctx context.Context, q db.Queries) error{
		"lane": func(ctx context.Context, q db.Queries) error { _, _, err := q.WorkLaneLock(ctx, lanes[0]); return err },
		"item": func(ctx context.Context, q db.Queries) error {
			_, _, _, err := q.WorkLaneItemLock(ctx, db.WorkLaneItemLockParams{LaneKey: lanes[1], WorkID: mustHead(t, s, lanes[1])})
			return err
		},
	} {
		release := holdInTx(t, s, hold)
		// The held row is released only after this transaction ends, so a claim that waited for it could never
		// finish: finishing at all is the proof. The deadline only turns such a hang into a failure; it is not a
		// speed claim (30 s is far above any honest duration).
		noWait, cancel := context.WithTimeout(ctx, 30*time.Second)
		var claimed []string
		require.NoError(t, s.InTx(noWait, func(ctx context.Context, q db.Queries) error {
			res, err := q.WorkItemClaimMany(ctx, db.WorkItemClaimManyParams{
				Supported: []db.KindVersions{{Kind: "k", Min: 1, Max: 1}}, Candidates: 32, Slots: 8, Owner: "w", Lease: time.Minute})
			for _, c := range res.Claimed {
				claimed = append(claimed, c.Item.LaneKey)
			}
			return err
		}), "held %s: the claim must not wait for it", name)
		cancel()
		require.NoError(t, release())
		require.NotEmpty(t, claimed, "held %s: the other heads are claimed", name)
		for _, l := range claimed {
			require.NotEqual(t, lanes[map[string]int{"lane": 0, "item": 1}[name]], l, "held %s is skipped", name)
		}
	}
}

// mustHead returns the work id of the lane's first item.
func mustHead(t *testing.T, s db.Store, lane string) string {
	t.Helper()
	items, err := s.WorkItemList(context.Background(), db.WorkItemListParams{Kinds: []string{"k"}, Limit: 100})
	require.NoError(t, err)
	for _, it := range items {
		if it.LaneKey == lane && it.LaneSequence == 1 {
			return it.WorkID
		}
	}
	t.Fatalf("no head on lane %s", lane)
	return ""
}

func testWorkLaneKeyItemLockMany(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneA, itemsA := laneWithItems(t, s, 1)
	laneB, itemsB := laneWithItems(t, s, 2)
	refs := []db.WorkItemRef{
		{LaneKey: laneA, LogicalKey: itemsA[0].LogicalKey, WorkID: itemsA[0].WorkID},
		{LaneKey: laneB, LogicalKey: randHex(t, 64), WorkID: itemsB[0].WorkID},       // no such key
		{LaneKey: laneB, LogicalKey: itemsB[1].LogicalKey, WorkID: uuid.NewString()}, // no such item
	}
	before := dbNow(t, s)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		locked, now, err := q.WorkLaneKeyItemLockMany(ctx, refs)
		require.NoError(t, err)
		requireUTC(t, now)
		require.False(t, now.Before(before))
		require.Len(t, locked, 3)
		require.True(t, locked[0].Found)
		require.True(t, locked[0].HasKey)
		require.Equal(t, db.WorkLane{LaneKey: laneA, NextSequence: 2, HeadSequence: 1}, locked[0].Lane)
		require.Equal(t, itemsA[0].WorkID, locked[0].Item.WorkID)
		require.True(t, locked[1].Found)
		require.False(t, locked[1].HasKey)
		require.Equal(t, itemsB[0], locked[1].Item)
		require.False(t, locked[2].Found)
		return nil
	}))
	_, err := s.Savepoint(ctx, func(context.Context, db.Queries) error { return nil })
	require.ErrorIs(t, err, db.ErrNoTransaction)

	// A held lane is waited for (the lock order is kept, not skipped).
	release := holdInTx(t, s, func(ctx context.Context, q db.Queries) error { _, _, err := q.WorkLaneLock(ctx, laneB); return err })
	got := make(chan time.Time, 1)
	go func() {
		_ = s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			_, now, err := q.WorkLaneKeyItemLockMany(ctx, refs[:2])
			got <- now
			return err
		})
	}()
	select {
	case <-got:
		t.Fatal("the lock set did not wait for a held lane")
	case <-time.After(300 * time.Millisecond):
	}
	released := dbNow(t, s)
	require.NoError(t, release())
	select {
	case now := <-got:
		require.False(t, now.Before(released), "the clock is read once every lock is held")
	case <-time.After(10 * time.Second):
		t.Fatal("the lock set never got the lane")
	}
}

func testWorkItemSucceedMany(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	laneA, itemsA := laneWithItems(t, s, 2) // a next item waits behind the head
	laneB, itemsB := laneWithItems(t, s, 1)
	claim := func(it db.WorkItem) db.WorkItem { return runningWithAttempt(t, s, it, now) }
	a, b := claim(itemsA[0]), claim(itemsB[0])
	at := now.Add(time.Second)
	var n int64
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		var err error
		n, err = q.WorkItemSucceedMany(ctx, db.WorkItemSucceedManyParams{Now: at, Items: []db.SucceedItem{
			{WorkID: a.WorkID, ExpectedVersion: a.StateVersion, ResultCode: "processed", ResultPayload: []byte(`{"n":1}`)},
			{WorkID: b.WorkID, ExpectedVersion: b.StateVersion, ResultCode: "idle"},
		}})
		return err
	}))
	require.EqualValues(t, 2, n)
	for _, c := range []struct {
		item    db.WorkItem
		code    string
		payload []byte
	}{{a, "processed", []byte(`{"n":1}`)}, {b, "idle", nil}} {
		got, err := s.WorkItemGet(ctx, c.item.WorkID)
		require.NoError(t, err)
		want := c.item
		want.Status, want.LeaseOwner, want.LeaseExpiresAt = db.StatusSucceeded, "", time.Time{}
		want.ResultCode, want.ResultPayload = c.code, c.payload
		want.StateVersion++
		want.UpdatedAt, want.CompletedAt = at, at
		require.Equal(t, want, got)
		att, err := s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: c.item.WorkID, AttemptNo: 1})
		require.NoError(t, err)
		require.Equal(t, db.OutcomeSucceeded, att.Outcome)
		require.Equal(t, at, att.FinishedAt)
		inserted, err := s.WorkKeyInsertIfAbsent(ctx, db.WorkKey{LogicalKey: c.item.LogicalKey, WorkID: uuid.NewString(), LaneKey: c.item.LaneKey, CreatedAt: at})
		require.NoError(t, err)
		require.True(t, inserted, "the key was deleted")
	}
	la, err := s.WorkLaneGet(ctx, laneA)
	require.NoError(t, err)
	require.EqualValues(t, 2, la.HeadSequence, "the head moved to the next item")
	lb, err := s.WorkLaneGet(ctx, laneB)
	require.NoError(t, err)
	require.Zero(t, lb.HeadSequence, "no next item: idle")

	// A stale expected version matches nothing, and the caller fails the transaction.
	c := claim(itemsA[1])
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		var err error
		n, err = q.WorkItemSucceedMany(ctx, db.WorkItemSucceedManyParams{Now: at, Items: []db.SucceedItem{
			{WorkID: c.WorkID, ExpectedVersion: c.StateVersion - 1, ResultCode: "processed"},
		}})
		return err
	}))
	require.Zero(t, n)
}

func testEnqueueMany(t *testing.T, s db.Store) {
	ctx := context.Background()
	idle := newLaneWithHead(t, s, 0, 1)
	busy, busyItems := laneWithItems(t, s, 1) // head 1, next 2, its key exists
	missing := randHex(t, 64)
	before := dbNow(t, s)
	var items []db.WorkItem
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		se := q
		lanes, now, err := se.WorkLaneLockMany(ctx, []string{idle, busy, missing})
		require.NoError(t, err)
		requireUTC(t, now)
		require.False(t, now.Before(before), "the clock is read with the locks")
		want := []db.WorkLane{{LaneKey: idle, NextSequence: 1}, {LaneKey: busy, NextSequence: 2, HeadSequence: 1}}
		if busy < idle {
			want[0], want[1] = want[1], want[0]
		}
		require.Equal(t, want, lanes, "the lanes that exist, ascending")

		now = us(now)
		a1 := newItem(t, idle, 1, "k", now)
		a2 := newItem(t, idle, 2, "k", now)
		b2 := newItem(t, busy, 2, "k", now)
		dupOfA1 := newItem(t, idle, 3, "k", now)
		dupOfA1.LogicalKey = a1.LogicalKey
		existing := newItem(t, busy, 3, "k", now)
		existing.LogicalKey = busyItems[0].LogicalKey
		var keys []db.WorkKey
		for _, it := range []db.WorkItem{a1, a2, b2, dupOfA1, existing} {
			keys = append(keys, db.WorkKey{LogicalKey: it.LogicalKey, WorkID: it.WorkID, LaneKey: it.LaneKey, CreatedAt: now})
		}
		ids, err := se.WorkKeyInsertMany(ctx, keys)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{a1.WorkID, a2.WorkID, b2.WorkID}, ids, "only new logical keys; the first of two")

		items = []db.WorkItem{a1, a2, b2}
		nl, ni, err := se.WorkItemEnqueueMany(ctx, now, []db.WorkLane{{LaneKey: idle, NextSequence: 3, HeadSequence: 1},
			{LaneKey: busy, NextSequence: 3, HeadSequence: 1}}, items)
		require.NoError(t, err)
		require.EqualValues(t, 2, nl)
		require.EqualValues(t, 3, ni)

		claimed := a1
		claimed.Status = db.StatusRunning
		_, _, err = se.WorkItemEnqueueMany(ctx, now, nil, []db.WorkItem{claimed})
		require.Error(t, err, "only items as an enqueue creates them")
		return nil
	}))
	for _, it := range items {
		got, err := s.WorkItemGet(ctx, it.WorkID)
		require.NoError(t, err)
		require.Equal(t, it, got)
		key, err := s.WorkKeyLock(ctx, it.LogicalKey)
		require.NoError(t, err)
		require.Equal(t, it.WorkID, key.WorkID)
	}
	for lane, want := range map[string]db.WorkLane{idle: {LaneKey: idle, NextSequence: 3, HeadSequence: 1}, busy: {LaneKey: busy, NextSequence: 3, HeadSequence: 1}} {
		got, err := s.WorkLaneGet(ctx, lane)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

// testEnqueueManyLaneLocksWait: WorkLaneLockMany waits for a lane another transaction holds, and holds every lane it
// locked until it commits.
func testEnqueueManyLaneLocksWait(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneA, laneB := newLaneWithHead(t, s, 0, 1), newLaneWithHead(t, s, 0, 1)
	locked, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, _, err := q.WorkLaneLockMany(ctx, []string{laneB}); err != nil {
				close(locked)
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	got := make(chan []db.WorkLane, 1)
	gotErr := make(chan error, 1)
	go func() {
		gotErr <- s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			lanes, _, err := q.WorkLaneLockMany(ctx, []string{laneA, laneB})
			got <- lanes
			return err
		})
	}()
	select {
	case <-got:
		close(release)
		t.Fatal("locked a lane another transaction held")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-first)
	require.NoError(t, <-gotErr)
	require.Len(t, <-got, 2)
}

// testWorkItemSucceedManyLocked: after the batch lock (WorkLaneKeyItemLockMany, as a batched completion runs it), an
// item whose expected version is stale is left exactly as it was — still running, its key kept, its lane's head
// where it was — while the other item of the batch finishes, its key deleted and its lane's head advanced. (The
// caller fails such a transaction; the writes are exact anyway.)
func testWorkItemSucceedManyLocked(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	laneA, itemsA := laneWithItems(t, s, 2)
	laneB, itemsB := laneWithItems(t, s, 2)
	claim := func(it db.WorkItem) db.WorkItem { return runningWithAttempt(t, s, it, now) }
	a, b := claim(itemsA[0]), claim(itemsB[0])
	at := now.Add(time.Second)
	var n int64
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		locked, _, err := q.WorkLaneKeyItemLockMany(ctx, []db.WorkItemRef{
			{LaneKey: a.LaneKey, LogicalKey: a.LogicalKey, WorkID: a.WorkID},
			{LaneKey: b.LaneKey, LogicalKey: b.LogicalKey, WorkID: b.WorkID},
		})
		require.NoError(t, err)
		require.Len(t, locked, 2)
		n, err = q.WorkItemSucceedMany(ctx, db.WorkItemSucceedManyParams{Now: at, Items: []db.SucceedItem{
			{WorkID: a.WorkID, ExpectedVersion: a.StateVersion, ResultCode: "processed"},
			{WorkID: b.WorkID, ExpectedVersion: b.StateVersion - 1, ResultCode: "processed"},
		}})
		return err
	}))
	require.EqualValues(t, 1, n)

	gotA, err := s.WorkItemGet(ctx, a.WorkID)
	require.NoError(t, err)
	require.Equal(t, db.StatusSucceeded, gotA.Status)
	inserted, err := s.WorkKeyInsertIfAbsent(ctx, db.WorkKey{LogicalKey: a.LogicalKey, WorkID: uuid.NewString(), LaneKey: a.LaneKey, CreatedAt: at})
	require.NoError(t, err)
	require.True(t, inserted, "the finished item's key was deleted")
	la, err := s.WorkLaneGet(ctx, laneA)
	require.NoError(t, err)
	require.EqualValues(t, 2, la.HeadSequence, "the finished item's lane moved to its next item")

	gotB, err := s.WorkItemGet(ctx, b.WorkID)
	require.NoError(t, err)
	require.Equal(t, b, gotB, "the stale item is untouched")
	att, err := s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: b.WorkID, AttemptNo: 1})
	require.NoError(t, err)
	require.True(t, att.FinishedAt.IsZero(), "the stale item's attempt is still running")
	inserted, err = s.WorkKeyInsertIfAbsent(ctx, db.WorkKey{LogicalKey: b.LogicalKey, WorkID: uuid.NewString(), LaneKey: b.LaneKey, CreatedAt: at})
	require.NoError(t, err)
	require.False(t, inserted, "the stale item's key is kept")
	lb, err := s.WorkLaneGet(ctx, laneB)
	require.NoError(t, err)
	require.EqualValues(t, 1, lb.HeadSequence, "the stale item's lane keeps its head")
}

// testWorkItemSucceedManyAtCommit: after the batch lock, as a completion's last write, the batch finishes whole when
// every item matches (items succeeded, attempts finished, keys free, heads moved); when one is stale, the transaction
// fails and keeps nothing, not even its earlier write or the items that matched.
func testWorkItemSucceedManyAtCommit(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	at := now.Add(time.Second)
	for _, stale := range []bool{false, true} {
		laneA, itemsA := laneWithItems(t, s, 2)
		laneB, itemsB := laneWithItems(t, s, 2)
		a, b := runningWithAttempt(t, s, itemsA[0], now), runningWithAttempt(t, s, itemsB[0], now)
		earlier := randHex(t, 64)
		bVersion := b.StateVersion
		if stale {
			bVersion--
		}
		err := s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, err := q.WorkLaneInsertIfAbsent(ctx, earlier); err != nil {
				return err
			}
			if _, _, err := q.WorkLaneKeyItemLockMany(ctx, []db.WorkItemRef{
				{LaneKey: a.LaneKey, LogicalKey: a.LogicalKey, WorkID: a.WorkID},
				{LaneKey: b.LaneKey, LogicalKey: b.LogicalKey, WorkID: b.WorkID},
			}); err != nil {
				return err
			}
			return q.WorkItemSucceedManyAtCommit(ctx, db.WorkItemSucceedManyParams{Now: at, Items: []db.SucceedItem{
				{WorkID: a.WorkID, ExpectedVersion: a.StateVersion, ResultCode: "processed"},
				{WorkID: b.WorkID, ExpectedVersion: bVersion, ResultCode: "processed"},
			}})
		})
		_, lerr := s.WorkLaneGet(ctx, earlier)
		for _, c := range []struct {
			it   db.WorkItem
			lane string
		}{{a, laneA}, {b, laneB}} {
			got, gerr := s.WorkItemGet(ctx, c.it.WorkID)
			require.NoError(t, gerr)
			att, aerr := s.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: c.it.WorkID, AttemptNo: 1})
			require.NoError(t, aerr)
			free, kerr := s.WorkKeyInsertIfAbsent(ctx, db.WorkKey{LogicalKey: c.it.LogicalKey, WorkID: uuid.NewString(), LaneKey: c.it.LaneKey, CreatedAt: at})
			require.NoError(t, kerr)
			lane, laneErr := s.WorkLaneGet(ctx, c.lane)
			require.NoError(t, laneErr)
			if stale {
				require.Equal(t, c.it, got, "nothing of the batch is kept")
				require.True(t, att.FinishedAt.IsZero(), "the attempt is still running")
				require.False(t, free, "the key is kept")
				require.EqualValues(t, 1, lane.HeadSequence, "the head stays")
				continue
			}
			require.Equal(t, db.StatusSucceeded, got.Status)
			require.Equal(t, db.OutcomeSucceeded, att.Outcome)
			require.True(t, free, "the key was deleted")
			require.EqualValues(t, 2, lane.HeadSequence, "the head moved to the next item")
		}
		if stale {
			require.Error(t, err, "a stale item fails the commit")
			require.ErrorIs(t, lerr, db.ErrNotFound, "the transaction's earlier write is rolled back too")
			continue
		}
		require.NoError(t, err)
		require.NoError(t, lerr)
	}
}

// runningWithAttempt claims it for owner "w" at now (state write and attempt 1), as a claim would.
func runningWithAttempt(t *testing.T, s db.Store, it db.WorkItem, now time.Time) db.WorkItem {
	t.Helper()
	ctx := context.Background()
	r := running(it, "w", now)
	n, err := s.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: r, ExpectedVersion: it.StateVersion})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.NoError(t, s.WorkAttemptInsert(ctx, db.WorkAttempt{WorkID: r.WorkID, AttemptNo: 1, OwnerID: "w", Fence: 1, StartedAt: now}))
	return r
}
