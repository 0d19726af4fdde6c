package storetest

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// workItemCases are the cases of pc_work_items (work_item.sql).
var workItemCases = []storeCase{
	{"WorkItemGet/TimesAreUTCMicroseconds", testTimeRoundTrip},
	{"WorkItemInsert/GetAndLock", testWorkItemInsertGetLock},
	{"WorkItemUpdateState/CompareAndSet", testWorkItemUpdateState},
	{"WorkItemExtendLease/Guards", testWorkItemExtendLease},
	{"WorkItemClaimCandidates/DueAndExpiredHeads", testWorkItemClaimCandidates},
	{"WorkItemList/FiltersAndKeyset", testWorkItemList},
	{"WorkItemPurgeCandidates/ThenDeleteTerminal", testWorkItemPurge},
	{"WorkItemQueueStatistics/ByKindAndStatus", testWorkItemQueueStatistics},
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

func ids(items []db.WorkItem) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.WorkID)
	}
	return out
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
		gotW, err = q.RateLimitWindowLock(ctx, db.RateLimitWindowLockParams{PrincipalKey: w.PrincipalKey, PolicyID: w.PolicyID, WindowStartedAt: w.WindowStartedAt})
		return err
	}))
	require.Equal(t, w, gotW)
}

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
		n, err := q.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: claimed, ExpectedVersion: 1})
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
	n, err := s.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: stale, ExpectedVersion: 1})
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
	n, err = s.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: done, ExpectedVersion: 2})
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
	n, err = s.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: cleared, ExpectedVersion: 3})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	got, err = s.WorkItemGet(ctx, item.WorkID)
	require.NoError(t, err)
	require.Equal(t, cleared, got)

	// A missing item changes nothing.
	missing := cleared
	missing.WorkID = uuid.NewString()
	n, err = s.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: missing, ExpectedVersion: 4})
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

	valid := db.WorkItemExtendLeaseParams{
		WorkID: item.WorkID, LeaseOwner: "worker-1", LeaseFence: 3, AttemptCount: 2,
		LeaseExpiresAt: now.Add(40 * time.Second),
	}
	for name, p := range map[string]db.WorkItemExtendLeaseParams{
		"wrong fence":   func() db.WorkItemExtendLeaseParams { p := valid; p.LeaseFence = 4; return p }(),
		"wrong owner":   func() db.WorkItemExtendLeaseParams { p := valid; p.LeaseOwner = "worker-2"; return p }(),
		"wrong attempt": func() db.WorkItemExtendLeaseParams { p := valid; p.AttemptCount = 1; return p }(),
		"missing item":  func() db.WorkItemExtendLeaseParams { p := valid; p.WorkID = uuid.NewString(); return p }(),
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
	n, err = s.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: cancelling, ExpectedVersion: 5})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.WorkItemExtendLease(ctx, valid)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)

	runningCancel := cancelling
	runningCancel.Status = db.StatusRunning
	runningCancel.StateVersion = 7
	n, err = s.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: runningCancel, ExpectedVersion: 6})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.WorkItemExtendLease(ctx, valid)
	require.NoError(t, err)
	require.EqualValues(t, 0, n, "cancel requested refuses the heartbeat")
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
	n, err := s.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: e, ExpectedVersion: 1})
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
		cs, err := s.WorkItemClaimCandidates(ctx, db.WorkItemClaimCandidatesParams{Kinds: kinds, Limit: limit})
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

	cs, err := s.WorkItemClaimCandidates(ctx, db.WorkItemClaimCandidatesParams{Kinds: []string{k2, k3}, Limit: 32})
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

	got, err := s.WorkItemPurgeCandidates(ctx, db.WorkItemPurgeCandidatesParams{CompletedBefore: cutoff, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []string{oldCancelled.WorkID, oldSucceeded.WorkID}, got)
	got, err = s.WorkItemPurgeCandidates(ctx, db.WorkItemPurgeCandidatesParams{CompletedBefore: cutoff, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, []string{oldCancelled.WorkID}, got)
	got, err = s.WorkItemPurgeCandidates(ctx, db.WorkItemPurgeCandidatesParams{CompletedBefore: now.Add(-1000 * time.Hour), Limit: 10})
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
	got, err = s.WorkItemPurgeCandidates(ctx, db.WorkItemPurgeCandidatesParams{CompletedBefore: now, Limit: 10})
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
