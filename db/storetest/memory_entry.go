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
	{"MemoryEntrySearch/LiteralSubstring", testMemoryEntrySearch},
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

func testMemoryEntrySearch(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)

	contents := []string{
		1: "Alpha likes Tea",
		2: "we are 100% sure",
		3: "we are 1000 sure",
		4: "snake_case name",
		5: "snakeXcase name",
		6: `path C:\temp\x`,
		7: "tempo rubato",
		8: "Café au lait",
	}
	for no := 1; no < len(contents); no++ {
		require.NoError(t, s.MemoryEntryInsert(ctx, db.MemoryEntry{
			ScopeID: scope, Revision: 1, EntryNo: int32(no), Content: contents[no],
			SourcePositions: []byte(`[1]`), CreatedAt: now,
		}))
	}
	// Same content in another revision and another scope: never returned.
	for _, e := range []db.MemoryEntry{
		{ScopeID: scope, Revision: 2, EntryNo: 1, Content: "Alpha likes Tea", SourcePositions: []byte(`[]`), CreatedAt: now},
		{ScopeID: "SCOPE-" + scope[len("scope-"):], Revision: 1, EntryNo: 1, Content: "Alpha likes Tea", SourcePositions: []byte(`[]`), CreatedAt: now},
	} {
		require.NoError(t, s.MemoryEntryInsert(ctx, e))
	}

	search := func(query string, limit int32) []int32 {
		t.Helper()
		es, err := s.MemoryEntrySearch(ctx, db.MemoryEntrySearchParams{ScopeID: scope, Revision: 1, Query: query, Limit: limit})
		require.NoError(t, err)
		out := make([]int32, 0, len(es))
		for _, e := range es {
			require.Equal(t, scope, e.ScopeID)
			require.EqualValues(t, 1, e.Revision)
			require.Equal(t, contents[e.EntryNo], e.Content)
			requireUTC(t, e.CreatedAt)
			out = append(out, e.EntryNo)
		}
		return out
	}

	// Case-insensitive substring (ASCII letters on every engine).
	require.Equal(t, []int32{1}, search("alpha", 10))
	require.Equal(t, []int32{1}, search("LIKES tea", 10))
	require.Equal(t, []int32{1}, search("a likes t", 10))
	require.Equal(t, []int32{8}, search("café", 10), "non-ASCII matches in its own case")
	require.Empty(t, search("coffee", 10))

	// Wildcards and the escape character are literal.
	require.Equal(t, []int32{2}, search("0%", 10), `"%" is literal (would also match "1000 sure")`)
	require.Equal(t, []int32{2}, search("100% ", 10))
	require.Equal(t, []int32{4}, search("e_c", 10), `"_" is literal (would also match "snakeXcase")`)
	require.Equal(t, []int32{6}, search(`\temp`, 10), `"\" is literal (would also match "tempo")`)
	require.Equal(t, []int32{6}, search(`C:\`, 10))
	require.Empty(t, search(`%%`, 10))
	require.Empty(t, search(`\`+"%", 10))

	// Entry order and limit.
	require.Equal(t, []int32{1, 2, 3, 4}, search("E", 4))
	require.Equal(t, []int32{1, 2, 3}, search("", 3), "an empty query matches every entry, by entry_no")
	require.Equal(t, []int32{4, 5}, search("SNAKE", 10))
	require.Equal(t, []int32{4}, search("snake", 1))
	require.Equal(t, []int32{6, 7}, search("temp", 10))
}
