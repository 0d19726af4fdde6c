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
	{"MemoryRevisionGet/List", testMemoryRevisionGetList},
	{"MemoryRevisionLatestWithEntryIDs/SkipsOlderBuilds", testMemoryRevisionLatestWithEntryIDs},
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
	r2.LastEntryID, r2.EvictedEntryIDs = 12, []byte(`[]`)
	r3.LastEntryID, r3.EvictedEntryIDs = 1<<40, []byte(`[3,9]`) // r1 records neither (NULL), as an older build writes it
	for _, r := range []db.MemoryRevision{r2, r1, r3, rev("SCOPE-other", 9)} {
		require.NoError(t, s.MemoryRevisionInsert(ctx, r))
	}
	require.ErrorIs(t, s.MemoryRevisionInsert(ctx, rev(scope, 2)), db.ErrConflict)

	latest, err := s.MemoryRevisionLatest(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, r3, latest)
	for _, r := range []db.MemoryRevision{r1, r2} {
		got, err := s.MemoryRevisionGet(ctx, db.MemoryRevisionGetParams{ScopeID: scope, Revision: r.Revision})
		require.NoError(t, err)
		require.Equal(t, r, got, "NULL reads as 0 and nil; [] stays non-nil")
	}
	other, err := s.MemoryRevisionLatest(ctx, "SCOPE-other")
	require.NoError(t, err)
	require.EqualValues(t, 9, other.Revision)
}

func testMemoryRevisionGetList(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	var revs []db.MemoryRevision
	for n := int64(1); n <= 5; n++ {
		r := db.MemoryRevision{ScopeID: scope, Revision: n, WorkID: uuid.NewString(), CursorGeneration: 1,
			WindowAfter: n - 1, WindowThrough: n, EntryCount: int32(n * 2), CreatedAt: now.Add(time.Duration(n) * time.Second)}
		require.NoError(t, s.MemoryRevisionInsert(ctx, r))
		revs = append(revs, r)
	}
	require.NoError(t, s.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: "SCOPE-" + scope[len("scope-"):], Revision: 1,
		WorkID: uuid.NewString(), CreatedAt: now}))

	got, err := s.MemoryRevisionGet(ctx, db.MemoryRevisionGetParams{ScopeID: scope, Revision: 3})
	require.NoError(t, err)
	require.Equal(t, revs[2], got)
	requireUTC(t, got.CreatedAt)
	_, err = s.MemoryRevisionGet(ctx, db.MemoryRevisionGetParams{ScopeID: scope, Revision: 6})
	require.ErrorIs(t, err, db.ErrNotFound)

	page, err := s.MemoryRevisionList(ctx, db.MemoryRevisionListParams{ScopeID: scope, BeforeRevision: 1 << 62, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []db.MemoryRevision{revs[4], revs[3]}, page)
	page, err = s.MemoryRevisionList(ctx, db.MemoryRevisionListParams{ScopeID: scope, BeforeRevision: 4, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []db.MemoryRevision{revs[2], revs[1], revs[0]}, page)
	page, err = s.MemoryRevisionList(ctx, db.MemoryRevisionListParams{ScopeID: scope, BeforeRevision: 1, Limit: 10})
	require.NoError(t, err)
	require.Empty(t, page)
}

func testMemoryRevisionLatestWithEntryIDs(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	_, err := s.MemoryRevisionLatestWithEntryIDs(ctx, scope)
	require.ErrorIs(t, err, db.ErrNotFound, "no revision")
	insert := func(scope string, n, last int64, evicted string) db.MemoryRevision {
		r := db.MemoryRevision{ScopeID: scope, Revision: n, WorkID: uuid.NewString(), LastEntryID: last, CreatedAt: now}
		if evicted != "" {
			r.EvictedEntryIDs = []byte(evicted)
		}
		require.NoError(t, s.MemoryRevisionInsert(ctx, r))
		return r
	}
	insert(scope, 1, 0, "") // written before ids, or by an older build
	_, err = s.MemoryRevisionLatestWithEntryIDs(ctx, scope)
	require.ErrorIs(t, err, db.ErrNotFound, "only a revision without ids")
	insert(scope, 2, 0, "[]") // ids recorded, none given out yet
	insert(scope, 3, 5, "[]")
	want := insert(scope, 4, 9, "[2]")
	insert(scope, 5, 0, "") // an older build again
	insert(scope, 6, 0, "")
	insert("SCOPE-"+scope[len("scope-"):], 9, 99, "[]")
	got, err := s.MemoryRevisionLatestWithEntryIDs(ctx, scope)
	require.NoError(t, err)
	require.Equal(t, want, got, "the newest revision that records ids")
}
