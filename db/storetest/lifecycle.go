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
