package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// lifecycleCases are the cases of the data lifecycle statements (forgetting Sources, erasing scopes, retention).
var lifecycleCases = []storeCase{
	{"SourceErase/TombstoneKeepsThePosition", testSourceErase},
	{"SourceListErasable/ConsumedByEveryCursorOldestFirst", testSourceListErasable},
	{"ScopeBatches/BoundedAndScoped", testScopeBatches},
	{"MemoryHistory/ExpiredKeysetScrub", testMemoryHistory},
	{"ExperienceCandidateWithdraw/OnceEmptiesText", testCandidateWithdraw},
	{"SourceJournalHeadDelete/ThenRecreatedAtZero", testJournalHeadDelete},
	{"WorkLaneDeleteIdle/OnlyWithoutAHead", testWorkLaneDeleteIdle},
}

// testJournalHeadDelete: the erase deletes one scope's head; insert-if-absent then creates it again at position 0.
func testJournalHeadDelete(t *testing.T, s db.Store) {
	ctx := context.Background()
	a, b := "scope-a-"+randHex(t, 8), "scope-b-"+randHex(t, 8)
	for _, scope := range []string{a, b} {
		_, err := s.SourceJournalHeadInsertIfAbsent(ctx, scope)
		require.NoError(t, err)
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			h, err := q.SourceJournalHeadLock(ctx, scope)
			if err != nil {
				return err
			}
			h.Position = 7
			return q.SourceJournalHeadUpdate(ctx, h)
		}))
	}
	n, err := s.SourceJournalHeadDelete(ctx, a)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	_, err = s.SourceJournalHeadGet(ctx, a)
	require.ErrorIs(t, err, db.ErrNotFound)
	other, err := s.SourceJournalHeadGet(ctx, b)
	require.NoError(t, err)
	require.EqualValues(t, 7, other.Position, "another scope is untouched")
	inserted, err := s.SourceJournalHeadInsertIfAbsent(ctx, a)
	require.NoError(t, err)
	require.True(t, inserted)
	again, err := s.SourceJournalHeadGet(ctx, a)
	require.NoError(t, err)
	require.Zero(t, again.Position, "a fresh journal")
}

// testWorkLaneDeleteIdle: only a lane without a head is deleted.
func testWorkLaneDeleteIdle(t *testing.T, s db.Store) {
	ctx := context.Background()
	idle, busy := randHex(t, 64), randHex(t, 64)
	for _, key := range []string{idle, busy} {
		_, err := s.WorkLaneInsertIfAbsent(ctx, key)
		require.NoError(t, err)
	}
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lane, _, err := q.WorkLaneLock(ctx, busy)
		if err != nil {
			return err
		}
		lane.HeadSequence, lane.NextSequence = 1, 2
		return q.WorkLaneUpdate(ctx, lane)
	}))
	n, err := s.WorkLaneDeleteIdle(ctx, busy)
	require.NoError(t, err)
	require.Zero(t, n, "a lane with a head stays")
	n, err = s.WorkLaneDeleteIdle(ctx, idle)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	_, err = s.WorkLaneGet(ctx, idle)
	require.ErrorIs(t, err, db.ErrNotFound)
	_, err = s.WorkLaneGet(ctx, busy)
	require.NoError(t, err)
}

// testScopeBatches: the erase's deletes take at most limit rows, of the named scope only.
func testScopeBatches(t *testing.T, s db.Store) {
	ctx := context.Background()
	at := us(dbNow(t, s))
	a, b := "scope-a-"+randHex(t, 8), "scope-b-"+randHex(t, 8)
	for pos := int64(1); pos <= 5; pos++ {
		require.NoError(t, s.SourceInsert(ctx, newSource(a, pos, at)))
		if pos <= 2 {
			require.NoError(t, s.SourceInsert(ctx, newSource(b, pos, at)))
		}
	}
	for _, want := range []int64{3, 2, 0} {
		n, err := s.SourceDeleteBatch(ctx, db.ScopeBatchParams{ScopeID: a, Limit: 3})
		require.NoError(t, err)
		require.Equal(t, want, n)
	}
	left, err := s.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: b, Limit: 10})
	require.NoError(t, err)
	require.Len(t, left, 2, "another scope is untouched")
	for _, scope := range []string{a, b} {
		require.NoError(t, s.SourceCursorInsert(ctx, db.SourceCursor{ScopeID: scope, CursorName: "memory", Position: 1, Generation: 1, UpdatedAt: at}))
	}
	n, err := s.SourceCursorDeleteByScope(ctx, a)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	_, err = s.SourceCursorGet(ctx, db.SourceCursorGetParams{ScopeID: b, CursorName: "memory"})
	require.NoError(t, err)
}

// testMemoryHistory: revisions beyond the newest keep per scope, the keyset over a scope's entries, and the
// scrub's single-entry writes.
func testMemoryHistory(t *testing.T, s db.Store) {
	ctx := context.Background()
	at := us(dbNow(t, s))
	a, b := "scope-a-"+randHex(t, 8), "scope-b-"+randHex(t, 8)
	for _, scope := range []string{a, b} {
		for rev := int64(1); rev <= 3; rev++ {
			require.NoError(t, s.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: scope, Revision: rev, WorkID: "00000000-0000-0000-0000-000000000001", EntryCount: 2, CreatedAt: at}))
			for no := int32(1); no <= 2; no++ {
				require.NoError(t, s.MemoryEntryInsert(ctx, db.MemoryEntry{ScopeID: scope, Revision: rev, EntryNo: no, Content: "e", SourcePositions: []byte("[1,2]"), CreatedAt: at}))
			}
		}
	}
	expired, err := s.MemoryRevisionListExpired(ctx, db.MemoryRevisionListExpiredParams{Keep: 2, Limit: 1000})
	require.NoError(t, err)
	var mine []db.MemoryRevisionRef
	for _, r := range expired {
		if r.ScopeID == a || r.ScopeID == b {
			mine = append(mine, r)
		}
	}
	want := []db.MemoryRevisionRef{{ScopeID: a, Revision: 1}, {ScopeID: b, Revision: 1}}
	if b < a {
		want[0], want[1] = want[1], want[0]
	}
	require.Equal(t, want, mine, "the newest two of each scope stay")

	page, err := s.MemoryEntryListByScopeAfter(ctx, db.MemoryEntryListByScopeAfterParams{ScopeID: a, AfterRevision: 1, AfterEntryNo: 2, Limit: 3})
	require.NoError(t, err)
	var keys [][2]int64
	for _, e := range page {
		keys = append(keys, [2]int64{e.Revision, int64(e.EntryNo)})
	}
	require.Equal(t, [][2]int64{{2, 1}, {2, 2}, {3, 1}}, keys, "keyset by (revision, entry_no)")

	n, err := s.MemoryEntryUpdatePositions(ctx, db.MemoryEntryUpdatePositionsParams{SourcePositions: []byte("[1]"), ScopeID: a, Revision: 2, EntryNo: 1})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.MemoryEntryDelete(ctx, db.MemoryEntryDeleteParams{ScopeID: a, Revision: 2, EntryNo: 2})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.MemoryRevisionSubtractEntries(ctx, db.MemoryRevisionSubtractEntriesParams{Removed: 1, ScopeID: a, Revision: 2})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	entries, err := s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: a, Revision: 2})
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.JSONEq(t, "[1]", string(entries[0].SourcePositions))

	n, err = s.MemoryEntryDeleteRevisionBatch(ctx, db.MemoryEntryDeleteRevisionBatchParams{ScopeID: a, Revision: 1, Limit: 1})
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "bounded")
	n, err = s.MemoryEntryDeleteBatch(ctx, db.ScopeBatchParams{ScopeID: a, Limit: 100})
	require.NoError(t, err)
	require.EqualValues(t, 4, n, "the rest of scope a")
	n, err = s.MemoryRevisionDeleteBatch(ctx, db.ScopeBatchParams{ScopeID: a, Limit: 2})
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	n, err = s.MemoryRevisionDelete(ctx, db.MemoryRevisionDeleteParams{ScopeID: b, Revision: 1})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	latest, err := s.MemoryRevisionLatest(ctx, b)
	require.NoError(t, err)
	require.EqualValues(t, 3, latest.Revision)
}

// testCandidateWithdraw: a withdrawal happens once, moves the version on and empties the text; the keyset pages a
// scope's candidates by id.
func testCandidateWithdraw(t *testing.T, s db.Store) {
	ctx := context.Background()
	at := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	ids := []string{"10000000-0000-0000-0000-" + randHex(t, 12), "f0000000-0000-0000-0000-" + randHex(t, 12)}
	for _, id := range ids {
		require.NoError(t, s.ExperienceCandidateInsert(ctx, db.ExperienceCandidate{CandidateID: id, ScopeID: scope,
			WorkID: "00000000-0000-0000-0000-000000000001", Title: "t", Lesson: "l", CitedPositions: []byte("[3]"),
			Status: "approved", StateVersion: 1, CreatedAt: at, UpdatedAt: at}))
	}
	page, err := s.ExperienceCandidateListByScopeAfter(ctx, db.ExperienceCandidateListByScopeAfterParams{ScopeID: scope, AfterCandidateID: db.NilUUID, Limit: 1})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, ids[0], page[0].CandidateID)
	page, err = s.ExperienceCandidateListByScopeAfter(ctx, db.ExperienceCandidateListByScopeAfterParams{ScopeID: scope, AfterCandidateID: ids[0], Limit: 10})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, ids[1], page[0].CandidateID)

	for _, want := range []int64{1, 0} {
		n, err := s.ExperienceCandidateWithdraw(ctx, db.ExperienceCandidateWithdrawParams{CandidateID: ids[1], UpdatedAt: at})
		require.NoError(t, err)
		require.Equal(t, want, n)
	}
	c, err := s.ExperienceCandidateGet(ctx, ids[1])
	require.NoError(t, err)
	require.Equal(t, "withdrawn", c.Status)
	require.EqualValues(t, 2, c.StateVersion)
	require.Empty(t, c.Title)
	require.Empty(t, c.Lesson)
}

func testSourceErase(t *testing.T, s db.Store) {
	ctx := context.Background()
	scope := "scope-" + randHex(t, 8)
	at := us(dbNow(t, s))
	for pos := int64(1); pos <= 3; pos++ {
		require.NoError(t, s.SourceInsert(ctx, newSource(scope, pos, at)))
	}
	kept := newSource(scope, 1, at)
	forgotten := newSource(scope, 2, at)

	before := dbNow(t, s)
	n, err := s.SourceErase(ctx, db.SourceEraseParams{ScopeID: scope, SourceID: forgotten.SourceID})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.SourceErase(ctx, db.SourceEraseParams{ScopeID: scope, SourceID: forgotten.SourceID})
	require.NoError(t, err)
	require.Zero(t, n, "erased once")
	n, err = s.SourceErase(ctx, db.SourceEraseParams{ScopeID: scope, SourceID: "no-such-source"})
	require.NoError(t, err)
	require.Zero(t, n)

	got, err := s.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: scope, SourceID: forgotten.SourceID})
	require.NoError(t, err)
	require.Empty(t, got.Content)
	require.JSONEq(t, `{}`, string(got.Metadata))
	require.Equal(t, forgotten.JournalPosition, got.JournalPosition, "the tombstone keeps its position")
	require.Equal(t, forgotten.SourceType, got.SourceType)
	require.False(t, got.ErasedAt.Before(before.Truncate(1e6)), "erased_at is the database clock")

	list, err := s.SourceListRange(ctx, db.SourceListRangeParams{ScopeID: scope, AfterPosition: 0, ThroughPosition: 3})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3}, positions(list), "windows stay dense")
	require.Equal(t, kept, list[0], "other Sources are untouched (erased_at NULL reads as zero)")
	require.True(t, list[0].ErasedAt.IsZero())
	require.False(t, list[1].ErasedAt.IsZero())
}

func testSourceListErasable(t *testing.T, s db.Store) {
	ctx := context.Background()
	at := us(dbNow(t, s)).Add(-time.Hour)
	a, b, c := "scope-a-"+randHex(t, 8), "scope-b-"+randHex(t, 8), "scope-c-"+randHex(t, 8)
	for pos := int64(1); pos <= 4; pos++ {
		require.NoError(t, s.SourceInsert(ctx, newSource(a, pos, at)))
		require.NoError(t, s.SourceInsert(ctx, newSource(b, pos, at.Add(time.Minute))))
		require.NoError(t, s.SourceInsert(ctx, newSource(c, pos, at)))
	}
	cursor := func(scope, name string, pos int64) {
		require.NoError(t, s.SourceCursorInsert(ctx, db.SourceCursor{ScopeID: scope, CursorName: name, Position: pos, Generation: 1, UpdatedAt: at}))
	}
	cursor(a, "memory", 3)
	cursor(a, "experience", 2) // the lowest cursor of a is 2
	cursor(b, "memory", 4)
	// c has no cursor: nothing of it is consumed

	list := func(before time.Time, limit int32) []db.SourcePosition {
		t.Helper()
		out, err := s.SourceListErasable(ctx, db.SourceListErasableParams{CreatedBefore: before, Limit: limit})
		require.NoError(t, err)
		var mine []db.SourcePosition // other cases' scopes share the database
		for _, p := range out {
			if p.ScopeID == a || p.ScopeID == b || p.ScopeID == c {
				mine = append(mine, p)
			}
		}
		return mine
	}
	require.Equal(t, []db.SourcePosition{{ScopeID: a, JournalPosition: 1}, {ScopeID: a, JournalPosition: 2}}, list(at.Add(time.Second), 1000), "b is newer than the cut-off")
	got := list(at.Add(2*time.Minute), 1000)
	require.Equal(t, []db.SourcePosition{{ScopeID: a, JournalPosition: 1}, {ScopeID: a, JournalPosition: 2}, {ScopeID: b, JournalPosition: 1}, {ScopeID: b, JournalPosition: 2}, {ScopeID: b, JournalPosition: 3}, {ScopeID: b, JournalPosition: 4}}, got, "oldest first")

	n, err := s.SourceEraseByPositions(ctx, db.SourceEraseByPositionsParams{ScopeID: b, Positions: []int64{1, 2, 9}})
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	n, err = s.SourceEraseByPositions(ctx, db.SourceEraseByPositionsParams{ScopeID: b, Positions: []int64{2, 3}})
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "an erased Source is not erased again")
	n, err = s.SourceEraseByPositions(ctx, db.SourceEraseByPositionsParams{ScopeID: b})
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, []db.SourcePosition{{ScopeID: a, JournalPosition: 1}, {ScopeID: a, JournalPosition: 2}, {ScopeID: b, JournalPosition: 4}}, list(at.Add(2*time.Minute), 1000), "erased Sources are no candidates")
	erased, err := s.SourceListRange(ctx, db.SourceListRangeParams{ScopeID: b, AfterPosition: 0, ThroughPosition: 4})
	require.NoError(t, err)
	require.Empty(t, erased[0].Content)
	require.False(t, erased[2].ErasedAt.IsZero())
	require.Equal(t, newSource(b, 4, at.Add(time.Minute)).Content, erased[3].Content)
}
