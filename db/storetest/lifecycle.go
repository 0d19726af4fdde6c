package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// lifecycleCases are the cases of the data lifecycle statements (forgetting Sources, erasing scopes, retention).
var lifecycleCases = []storeCase{
	{"SourceErase/TombstoneKeepsThePosition", testSourceErase},
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
