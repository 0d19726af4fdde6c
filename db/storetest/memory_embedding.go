package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// memoryEmbeddingCases are the cases of pc_memory_embeddings (memory_embedding.sql).
var memoryEmbeddingCases = []storeCase{
	{"MemoryEmbeddingUpsert/ListByRevision", testMemoryEmbeddingUpsert},
	{"MemoryEmbeddingListStaleScopes/Keyset", testMemoryEmbeddingStale},
	{"MemoryEmbeddingDelete/OneBeforeBatchRevision", testMemoryEmbeddingDelete},
}

// vec is a stored vector of dims dimensions whose bytes differ by seed.
func vec(dims int, seed byte) []byte {
	b := make([]byte, 4*dims)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

func embedding(scope string, rev int64, no int32, model string, at time.Time) db.MemoryEmbedding {
	return db.MemoryEmbedding{ScopeID: scope, Revision: rev, EntryNo: no, Model: model, Dimensions: 3,
		Embedding: vec(3, byte(no)), CreatedAt: at.Add(time.Duration(no) * time.Microsecond)}
}

func testMemoryEmbeddingUpsert(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	upper := "SCOPE-" + scope[len("scope-"):]

	list, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 1})
	require.NoError(t, err)
	require.Empty(t, list)

	e1, e2, e3 := embedding(scope, 1, 1, "m", now), embedding(scope, 1, 2, "m", now), embedding(scope, 1, 3, "other", now)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		for _, e := range []db.MemoryEmbedding{e3, e1, e2, embedding(scope, 2, 1, "m", now), embedding(upper, 1, 1, "m", now)} {
			require.NoError(t, q.MemoryEmbeddingUpsert(ctx, e))
		}
		return nil
	}))
	list, err = s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 1})
	require.NoError(t, err)
	require.Equal(t, []db.MemoryEmbedding{e1, e2, e3}, list, "every model, in entry order, bytes exact")
	for _, e := range list {
		requireUTC(t, e.CreatedAt)
	}

	// The upsert replaces a vector (of another model, another length) in place.
	e3b := db.MemoryEmbedding{ScopeID: scope, Revision: 1, EntryNo: 3, Model: "m", Dimensions: 5, Embedding: vec(5, 9), CreatedAt: now.Add(time.Second)}
	require.NoError(t, s.MemoryEmbeddingUpsert(ctx, e3b))
	list, err = s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 1})
	require.NoError(t, err)
	require.Equal(t, []db.MemoryEmbedding{e1, e2, e3b}, list)

	// The byte count must be 4 × dimensions, and dimensions 1..8192.
	bad := embedding(scope, 3, 1, "m", now)
	bad.Dimensions = 4
	require.Error(t, s.MemoryEmbeddingUpsert(ctx, bad))
	bad = embedding(scope, 3, 1, "m", now)
	bad.Dimensions, bad.Embedding = 0, nil
	require.Error(t, s.MemoryEmbeddingUpsert(ctx, bad))

	list, err = s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: upper, Revision: 1})
	require.NoError(t, err)
	require.Len(t, list, 1, "scopes are byte-exact")
	require.Equal(t, upper, list[0].ScopeID)
}

func testMemoryEmbeddingStale(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	p := "stale-" + randHex(t, 4) + "/"
	revision := func(scope string, rev int64, entries int32) {
		require.NoError(t, s.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: scope, Revision: rev, WorkID: uuid.NewString(),
			CursorGeneration: 1, WindowAfter: rev - 1, WindowThrough: rev, EntryCount: entries, CreatedAt: now}))
	}
	vectors := func(scope string, rev int64, model string, n int32) {
		for no := int32(1); no <= n; no++ {
			require.NoError(t, s.MemoryEmbeddingUpsert(ctx, embedding(scope, rev, no, model, now)))
		}
	}
	for _, c := range []struct {
		scope string
		setup func(scope string)
	}{
		{p + "a-done", func(sc string) { revision(sc, 1, 1); revision(sc, 2, 2); vectors(sc, 2, "m", 2) }},
		{p + "b-partial", func(sc string) { revision(sc, 1, 2); vectors(sc, 1, "m", 1) }},
		{p + "c-empty", func(sc string) { revision(sc, 1, 0) }},
		{p + "d-no-revision", func(string) {}},
		{p + "e-other-model", func(sc string) { revision(sc, 1, 1); vectors(sc, 1, "old", 1) }},
		{p + "f-old-revision-only", func(sc string) { revision(sc, 1, 1); vectors(sc, 1, "m", 1); revision(sc, 2, 1) }},
		{p + "g-none", func(sc string) { revision(sc, 1, 3) }},
	} {
		_, err := s.SourceJournalHeadInsertIfAbsent(ctx, c.scope)
		require.NoError(t, err)
		c.setup(c.scope)
	}
	// Another deployment's scopes sort before the prefix; the keyset starts after them.
	page := func(after string, limit int32) []string {
		got, err := s.MemoryEmbeddingListStaleScopes(ctx, db.MemoryEmbeddingListStaleScopesParams{AfterScopeID: after, Model: "m", Limit: limit})
		require.NoError(t, err)
		return got
	}
	want := []string{p + "b-partial", p + "e-other-model", p + "f-old-revision-only", p + "g-none"}
	require.Equal(t, want, page(p, 100))
	require.Equal(t, want[:2], page(p, 2))
	require.Equal(t, want[2:], page(want[1], 2), "keyset: strictly after the continuation")
	require.Empty(t, page(want[3], 2))
	got, err := s.MemoryEmbeddingListStaleScopes(ctx, db.MemoryEmbeddingListStaleScopesParams{AfterScopeID: p, Model: "old", Limit: 100})
	require.NoError(t, err)
	require.Equal(t, []string{p + "a-done", p + "b-partial", p + "f-old-revision-only", p + "g-none"}, got, "per model")
}

func testMemoryEmbeddingDelete(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope, other := "del-"+randHex(t, 8), "keep-"+randHex(t, 8)
	for _, sc := range []string{scope, other} {
		for rev := int64(1); rev <= 3; rev++ {
			for no := int32(1); no <= 4; no++ {
				require.NoError(t, s.MemoryEmbeddingUpsert(ctx, embedding(sc, rev, no, "m", now)))
			}
		}
	}
	count := func(sc string, rev int64) int {
		list, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: sc, Revision: rev})
		require.NoError(t, err)
		return len(list)
	}

	n, err := s.MemoryEmbeddingDelete(ctx, db.MemoryEntryDeleteParams{ScopeID: scope, Revision: 3, EntryNo: 2})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.MemoryEmbeddingDelete(ctx, db.MemoryEntryDeleteParams{ScopeID: scope, Revision: 3, EntryNo: 2})
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, 3, count(scope, 3))

	// Before revision 3, in batches of at most limit.
	n, err = s.MemoryEmbeddingDeleteBefore(ctx, db.MemoryEmbeddingDeleteBeforeParams{ScopeID: scope, BeforeRevision: 3, Limit: 5})
	require.NoError(t, err)
	require.EqualValues(t, 5, n)
	n, err = s.MemoryEmbeddingDeleteBefore(ctx, db.MemoryEmbeddingDeleteBeforeParams{ScopeID: scope, BeforeRevision: 3, Limit: 5})
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	require.Equal(t, 0, count(scope, 1)+count(scope, 2))
	require.Equal(t, 3, count(scope, 3), "the latest revision keeps its vectors")

	n, err = s.MemoryEmbeddingDeleteRevisionBatch(ctx, db.MemoryEntryDeleteRevisionBatchParams{ScopeID: other, Revision: 2, Limit: 3})
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	require.Equal(t, 1, count(other, 2))
	require.Equal(t, 4, count(other, 1))

	n, err = s.MemoryEmbeddingDeleteBatch(ctx, db.ScopeBatchParams{ScopeID: scope, Limit: 2})
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	n, err = s.MemoryEmbeddingDeleteBatch(ctx, db.ScopeBatchParams{ScopeID: scope, Limit: 2})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.Equal(t, 0, count(scope, 3))
	require.Equal(t, 4+1+4, count(other, 1)+count(other, 2)+count(other, 3), "another scope is untouched")
}
