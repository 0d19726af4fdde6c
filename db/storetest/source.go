package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// sourceCases are the cases of pc_sources and pc_source_journal_heads (source.sql).
var sourceCases = []storeCase{
	{"SourceJournalHeadLock/InsertLockUpdateGet", testSourceJournalHead},
	{"SourceJournalHeadListPending/KeysetBeyondCursor", testSourceJournalHeadListPending},
	{"SourceInsert/UniqueKeysGetAndList", testSource},
	{"SourceInsertMany/LiveAndTombstonesByteExact", testSourceInsertMany},
	{"SourceInsertMany/ConflictWritesNothing", testSourceInsertManyConflict},
	{"SourceCountErased/TombstonesThroughAPosition", testSourceCountErased},
}

// testSourceCountErased: the count takes the scope's tombstones at or before the position, not live Sources, not
// later ones and not another scope's; an empty or unknown scope counts 0.
func testSourceCountErased(t *testing.T, s db.Store) {
	ctx := context.Background()
	scope, other := "scope-"+randHex(t, 8), "scope-"+randHex(t, 8)
	now := us(dbNow(t, s))
	var batch []db.Source
	for pos := int64(1); pos <= 6; pos++ {
		src := newSource(scope, pos, now)
		if pos%2 == 0 { // 2, 4 and 6 are tombstones
			src.ErasedAt = now
		}
		batch = append(batch, src)
	}
	require.NoError(t, s.SourceInsertMany(ctx, batch))
	o := newSource(other, 1, now)
	o.ErasedAt = now
	require.NoError(t, s.SourceInsertMany(ctx, []db.Source{o}))
	for through, want := range map[int64]int64{0: 0, 1: 0, 2: 1, 5: 2, 6: 3, 100: 3} {
		n, err := s.SourceCountErased(ctx, db.SourceCountErasedParams{ScopeID: scope, ThroughPosition: through})
		require.NoError(t, err)
		require.Equal(t, want, n, "through %d", through)
	}
	n, err := s.SourceCountErased(ctx, db.SourceCountErasedParams{ScopeID: "scope-" + randHex(t, 8), ThroughPosition: 10})
	require.NoError(t, err)
	require.Zero(t, n)
}

// testSourceInsertMany: one statement writes live Sources byte-exact (text that JSON and SQL escape, metadata
// bytes) and forgotten ones as tombstones (no text whatever the value carries, erased_at kept, SourceErase matches
// nothing); an empty batch writes nothing.
func testSourceInsertMany(t *testing.T, s db.Store) {
	ctx := context.Background()
	scope := "scope-" + randHex(t, 8)
	now := us(dbNow(t, s))
	require.NoError(t, s.SourceInsertMany(ctx, nil))
	require.NoError(t, s.SourceInsertMany(ctx, []db.Source{}))

	batch := make([]db.Source, 0, 5)
	for pos := int64(1); pos <= 5; pos++ {
		batch = append(batch, newSource(scope, pos, now))
	}
	batch[1].ErasedAt = now.Add(time.Hour)
	batch[2].Content = "quotes \" \\ ' <b>&amp;</b> \u0001\ttab\nnewline é 漢字 😀 %s ?"
	batch[2].Metadata = []byte(`{"a":"\u00e9 \"x\"","b":[1,2.5,null],"c":{}}`)
	batch[3].ErasedAt = now.Add(2 * time.Hour)
	batch[3].SourceType = "chat"
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		return q.SourceInsertMany(ctx, batch)
	}))

	want := append([]db.Source(nil), batch...)
	for _, i := range []int{1, 3} {
		want[i].Content, want[i].Metadata = "", []byte("{}")
	}
	got, err := s.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, want, got)
	for _, g := range got {
		requireUTC(t, g.CreatedAt)
	}
	requireUTC(t, got[1].ErasedAt)
	n, err := s.SourceErase(ctx, db.SourceEraseParams{ScopeID: scope, SourceID: batch[1].SourceID})
	require.NoError(t, err)
	require.Zero(t, n, "a tombstone is already erased")
	n, err = s.SourceErase(ctx, db.SourceEraseParams{ScopeID: scope, SourceID: batch[0].SourceID})
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "a live Source can be erased")
}

// testSourceInsertManyConflict: a batch that takes a used source id or position, or repeats one of its own, is a
// conflict and writes none of its rows; Sources of two scopes in one batch are refused.
func testSourceInsertManyConflict(t *testing.T, s db.Store) {
	ctx := context.Background()
	scope := "scope-" + randHex(t, 8)
	now := us(dbNow(t, s))
	require.NoError(t, s.SourceInsert(ctx, newSource(scope, 1, now)))

	list := func() []int64 {
		t.Helper()
		ss, err := s.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, Limit: 10})
		require.NoError(t, err)
		return positions(ss)
	}
	takenID := []db.Source{newSource(scope, 2, now), newSource(scope, 3, now)}
	takenID[1].SourceID = newSource(scope, 1, now).SourceID
	require.ErrorIs(t, s.SourceInsertMany(ctx, takenID), db.ErrConflict, "the source id is taken")
	takenPos := []db.Source{newSource(scope, 2, now), newSource(scope, 1, now)}
	takenPos[1].SourceID = "other"
	takenPos[1].ErasedAt = now
	require.ErrorIs(t, s.SourceInsertMany(ctx, takenPos), db.ErrConflict, "the position is taken (a tombstone too)")
	twice := []db.Source{newSource(scope, 2, now), newSource(scope, 3, now)}
	twice[1].SourceID = twice[0].SourceID
	require.ErrorIs(t, s.SourceInsertMany(ctx, twice), db.ErrConflict, "the batch repeats a source id")
	require.Equal(t, []int64{1}, list(), "a refused batch writes none of its rows")

	mixed := []db.Source{newSource(scope, 2, now), newSource("other-"+scope, 1, now)}
	require.Error(t, s.SourceInsertMany(ctx, mixed))
	require.Equal(t, []int64{1}, list())
	_, err := s.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: "other-" + scope, SourceID: mixed[1].SourceID})
	require.ErrorIs(t, err, db.ErrNotFound)
}

func newSource(scope string, pos int64, at time.Time) db.Source {
	return db.Source{
		ScopeID:         scope,
		JournalPosition: pos,
		SourceID:        "src-" + string(rune('a'+pos)),
		SourceType:      "note",
		Content:         "content é " + string(rune('a'+pos)),
		Metadata:        []byte(`{"k":"v","n":` + string(rune('0'+pos%10)) + `}`),
		CreatedAt:       at.Add(time.Duration(pos) * time.Microsecond),
	}
}

func positions(ss []db.Source) []int64 {
	out := make([]int64, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.JournalPosition)
	}
	return out
}

func testSourceJournalHead(t *testing.T, s db.Store) {
	ctx := context.Background()
	scope := "scope-" + randHex(t, 8)

	_, err := s.SourceJournalHeadGet(ctx, scope)
	require.ErrorIs(t, err, db.ErrNotFound)
	require.ErrorIs(t, s.SourceJournalHeadUpdate(ctx, db.SourceJournalHead{ScopeID: scope, Position: 1, UpdatedAt: time.Now()}),
		db.ErrNotFound)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.SourceJournalHeadLock(ctx, scope)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))

	// Insert-if-absent creates an empty head (position 0) stamped with the database clock, once.
	before := dbNow(t, s)
	inserted, err := s.SourceJournalHeadInsertIfAbsent(ctx, scope)
	require.NoError(t, err)
	require.True(t, inserted)
	inserted, err = s.SourceJournalHeadInsertIfAbsent(ctx, scope)
	require.NoError(t, err)
	require.False(t, inserted)
	head, err := s.SourceJournalHeadGet(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, scope, head.ScopeID)
	require.Zero(t, head.Position)
	requireUTC(t, head.UpdatedAt)
	requireNear(t, before, head.UpdatedAt, clockSlack)

	// Byte-exact scope ids: a case variant is another head.
	upper := "SCOPE-" + scope[len("scope-"):]
	inserted, err = s.SourceJournalHeadInsertIfAbsent(ctx, upper)
	require.NoError(t, err)
	require.True(t, inserted)

	// Lock, advance and read back inside one transaction; the variant is untouched.
	at := us(dbNow(t, s)).Add(123 * time.Microsecond)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		locked, err := q.SourceJournalHeadLock(ctx, scope)
		require.NoError(t, err)
		require.Equal(t, head, locked)
		require.NoError(t, q.SourceJournalHeadUpdate(ctx, db.SourceJournalHead{ScopeID: scope, Position: 3, UpdatedAt: at}))
		got, err := q.SourceJournalHeadGet(ctx, scope)
		require.NoError(t, err)
		require.Equal(t, db.SourceJournalHead{ScopeID: scope, Position: 3, UpdatedAt: at}, got)
		return nil
	}))
	got, err := s.SourceJournalHeadGet(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, db.SourceJournalHead{ScopeID: scope, Position: 3, UpdatedAt: at}, got)
	other, err := s.SourceJournalHeadGet(ctx, upper)
	require.NoError(t, err)
	require.Zero(t, other.Position)

	// An existing head is not reset by a later insert-if-absent.
	inserted, err = s.SourceJournalHeadInsertIfAbsent(ctx, scope)
	require.NoError(t, err)
	require.False(t, inserted)
	got, err = s.SourceJournalHeadGet(ctx, scope)
	require.NoError(t, err)
	require.EqualValues(t, 3, got.Position)

	// A rolled-back update leaves the head as it was.
	errRollback := errors.New("rollback")
	require.ErrorIs(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		if _, err := q.SourceJournalHeadLock(ctx, scope); err != nil {
			return err
		}
		if err := q.SourceJournalHeadUpdate(ctx, db.SourceJournalHead{ScopeID: scope, Position: 9, UpdatedAt: at}); err != nil {
			return err
		}
		return errRollback
	}), errRollback)
	got, err = s.SourceJournalHeadGet(ctx, scope)
	require.NoError(t, err)
	require.EqualValues(t, 3, got.Position)
}

func testSourceJournalHeadListPending(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))

	// Heads (byte order of scope ids: "B" < "a" < "b" < "c" < "d" < "é").
	heads := map[string]int64{"a": 0, "B": 1, "b": 5, "c": 3, "d": 7, "é": 2}
	for scope, pos := range heads {
		inserted, err := s.SourceJournalHeadInsertIfAbsent(ctx, scope)
		require.NoError(t, err)
		require.True(t, inserted)
		if pos > 0 {
			require.NoError(t, s.SourceJournalHeadUpdate(ctx, db.SourceJournalHead{ScopeID: scope, Position: pos, UpdatedAt: now}))
		}
	}
	// Cursors: under cursorMemory, b is caught up, c is behind, the others have none (missing = 0).
	// Under cursorExperience only d is caught up.
	for _, c := range []db.SourceCursor{
		{ScopeID: "b", CursorName: cursorMemory, Position: 5, Generation: 2, UpdatedAt: now},
		{ScopeID: "c", CursorName: cursorMemory, Position: 1, Generation: 1, UpdatedAt: now},
		{ScopeID: "d", CursorName: cursorExperience, Position: 7, Generation: 1, UpdatedAt: now},
		{ScopeID: "a", CursorName: cursorExperience, Position: 0, Generation: 0, UpdatedAt: now},
	} {
		require.NoError(t, s.SourceCursorInsert(ctx, c))
	}

	scopes := func(hs []db.SourceJournalHead) []string {
		out := make([]string, 0, len(hs))
		for _, h := range hs {
			requireUTC(t, h.UpdatedAt)
			require.Equal(t, heads[h.ScopeID], h.Position, h.ScopeID)
			out = append(out, h.ScopeID)
		}
		return out
	}
	list := func(cursorName, after string, limit int32) []string {
		t.Helper()
		hs, err := s.SourceJournalHeadListPending(ctx, db.SourceJournalHeadListPendingParams{CursorName: cursorName, AfterScopeID: after, Limit: limit})
		require.NoError(t, err)
		return scopes(hs)
	}

	require.Equal(t, []string{"B", "c", "d", "é"}, list(cursorMemory, "", 10))
	require.Equal(t, []string{"B", "b", "c", "é"}, list(cursorExperience, "", 10))
	require.Equal(t, []string{"B", "b", "c", "d", "é"}, list("no-such-cursor", "", 10), "a missing cursor counts as 0")

	// Keyset pages: strictly after the given scope id, in byte order, at most limit rows.
	require.Equal(t, []string{"B", "c"}, list(cursorMemory, "", 2))
	require.Equal(t, []string{"d", "é"}, list(cursorMemory, "c", 2))
	require.Equal(t, []string{"c", "d"}, list(cursorMemory, "B", 2))
	require.Equal(t, []string{"c"}, list(cursorMemory, "b", 1))
	require.Empty(t, list(cursorMemory, "é", 10))
	require.Equal(t, []string{"é"}, list(cursorMemory, "z", 10), "non-ASCII ids sort after ASCII (byte order)")

	// Advancing the cursor to the head removes the scope from the pending set.
	n, err := s.SourceCursorAdvance(ctx, db.SourceCursorAdvanceParams{Cursor: db.SourceCursor{ScopeID: "c", CursorName: cursorMemory, Position: 3, Generation: 2, UpdatedAt: now}, FromPosition: 1, FromGeneration: 1})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.Equal(t, []string{"B", "d", "é"}, list(cursorMemory, "", 10))
}

func testSource(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	upper := "SCOPE-" + scope[len("scope-"):]

	_, err := s.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: scope, SourceID: "src-b"})
	require.ErrorIs(t, err, db.ErrNotFound)
	list, err := s.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, AfterPosition: 0, Limit: 10})
	require.NoError(t, err)
	require.Empty(t, list)

	// Capture five Sources the way the domain does: head insert-if-absent, then lock, insert and advance in one tx.
	_, err = s.SourceJournalHeadInsertIfAbsent(ctx, scope)
	require.NoError(t, err)
	var sources []db.Source
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		head, err := q.SourceJournalHeadLock(ctx, scope)
		require.NoError(t, err)
		for pos := head.Position + 1; pos <= 5; pos++ {
			src := newSource(scope, pos, now)
			require.NoError(t, q.SourceInsert(ctx, src))
			sources = append(sources, src)
		}
		head.Position = 5
		head.UpdatedAt = now
		return q.SourceJournalHeadUpdate(ctx, head)
	}))
	// The case variant of the scope is another journal: same source ids and positions do not conflict.
	for pos := int64(1); pos <= 2; pos++ {
		require.NoError(t, s.SourceInsert(ctx, newSource(upper, pos, now)))
	}

	got, err := s.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: scope, SourceID: "src-b"})
	require.NoError(t, err)
	require.Equal(t, sources[0], got)
	requireUTC(t, got.CreatedAt)
	_, err = s.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: scope, SourceID: "SRC-B"})
	require.ErrorIs(t, err, db.ErrNotFound, "source ids are byte-exact")
	_, err = s.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: scope, SourceID: "src-z"})
	require.ErrorIs(t, err, db.ErrNotFound)

	// Duplicate (scope, source_id) at a new position, and a new source id at a taken position, are conflicts.
	dupID := newSource(scope, 6, now)
	dupID.SourceID = sources[1].SourceID
	require.ErrorIs(t, s.SourceInsert(ctx, dupID), db.ErrConflict)
	dupPos := newSource(scope, 3, now)
	dupPos.SourceID = "src-new"
	require.ErrorIs(t, s.SourceInsert(ctx, dupPos), db.ErrConflict)
	_, err = s.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: scope, SourceID: "src-new"})
	require.ErrorIs(t, err, db.ErrNotFound)

	// Windows (after, through] in journal order.
	rangeOf := func(scope string, after, through int64) []int64 {
		t.Helper()
		ss, err := s.SourceListRange(ctx, db.SourceListRangeParams{ScopeID: scope, AfterPosition: after, ThroughPosition: through})
		require.NoError(t, err)
		return positions(ss)
	}
	all, err := s.SourceListRange(ctx, db.SourceListRangeParams{ScopeID: scope, AfterPosition: 0, ThroughPosition: 5})
	require.NoError(t, err)
	require.Equal(t, sources, all)
	require.Equal(t, []int64{2, 3}, rangeOf(scope, 1, 3))
	require.Equal(t, []int64{5}, rangeOf(scope, 4, 100))
	require.Empty(t, rangeOf(scope, 3, 3))
	require.Empty(t, rangeOf(scope, 5, 10))
	require.Equal(t, []int64{1, 2}, rangeOf(upper, 0, 10))

	afterOf := func(after int64, limit int32) []int64 {
		t.Helper()
		ss, err := s.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, AfterPosition: after, Limit: limit})
		require.NoError(t, err)
		return positions(ss)
	}
	require.Equal(t, []int64{1, 2}, afterOf(0, 2))
	require.Equal(t, []int64{3, 4, 5}, afterOf(2, 10))
	require.Equal(t, []int64{5}, afterOf(4, 1))
	require.Empty(t, afterOf(5, 10))
	ss, err := s.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, AfterPosition: 3, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, sources[3:], ss)
}
