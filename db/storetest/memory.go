package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// memoryCases are the cases of pc_memory_revisions (memory.sql).
var memoryCases = []storeCase{
	{"MemoryRevisionInsert/Latest", testMemoryRevision},
}

func testMemoryRevision(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)

	_, err := s.MemoryRevisionLatest(ctx, scope)
	require.ErrorIs(t, err, db.ErrNotFound)

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
	other, err := s.MemoryRevisionLatest(ctx, "SCOPE-other")
	require.NoError(t, err)
	require.EqualValues(t, 9, other.Revision)
}
