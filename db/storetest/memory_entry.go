package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// memoryEntryCases are the cases of pc_memory_entries (memory_entry.sql).
var memoryEntryCases = []storeCase{
	{"MemoryEntryInsert/ListByRevision", testMemoryEntry},
}

func testMemoryEntry(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	upper := "SCOPE-" + scope[len("scope-"):]

	list, err := s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 1})
	require.NoError(t, err)
	require.Empty(t, list)

	entry := func(scope string, rev int64, no int32) db.MemoryEntry {
		return db.MemoryEntry{
			ScopeID: scope, Revision: rev, EntryNo: no, Content: "fact é " + randHex(t, 8),
			SourcePositions: []byte(`[1,2,3]`), CreatedAt: now.Add(time.Duration(no) * time.Microsecond),
		}
	}
	e1, e2, e3 := entry(scope, 1, 1), entry(scope, 1, 2), entry(scope, 1, 3)
	e1.EntryID, e3.EntryID = 7, 1<<40 // e2 has none (NULL), as an older build writes it
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		for _, e := range []db.MemoryEntry{e3, e1, e2, entry(scope, 2, 1), entry(upper, 1, 1)} {
			require.NoError(t, q.MemoryEntryInsert(ctx, e))
		}
		return nil
	}))
	require.ErrorIs(t, s.MemoryEntryInsert(ctx, entry(scope, 1, 2)), db.ErrConflict)

	list, err = s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 1})
	require.NoError(t, err)
	require.Equal(t, []db.MemoryEntry{e1, e2, e3}, list)
	require.Equal(t, []int64{7, 0, 1 << 40}, []int64{list[0].EntryID, list[1].EntryID, list[2].EntryID})
	for _, e := range list {
		requireUTC(t, e.CreatedAt)
	}
	list, err = s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 2})
	require.NoError(t, err)
	require.Len(t, list, 1)
	list, err = s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 3})
	require.NoError(t, err)
	require.Empty(t, list)
	list, err = s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: upper, Revision: 1})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, upper, list[0].ScopeID)
}
