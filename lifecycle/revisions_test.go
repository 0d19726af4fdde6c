package lifecycle_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/lifecycle"
)

// TestRetentionKeepsNewestRevisions: with POWERCONTEXT_RETENTION_MEMORY_REVISIONS = 2, maintenance deletes every
// older revision of every scope with its entries and their vectors, in batches, and keeps the newest two (a scope with fewer keeps
// all).
func TestRetentionKeepsNewestRevisions(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		now, err := s.DBNow(ctx)
		require.NoError(t, err)
		write := func(scope string, revs, entries int) {
			for r := 1; r <= revs; r++ {
				require.NoError(t, s.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: scope, Revision: int64(r),
					WorkID: "00000000-0000-0000-0000-000000000001", EntryCount: int32(entries), CreatedAt: now}))
				for e := 1; e <= entries; e++ {
					require.NoError(t, s.MemoryEntryInsert(ctx, db.MemoryEntry{ScopeID: scope, Revision: int64(r), EntryNo: int32(e),
						Content: fmt.Sprintf("entry %d", e), SourcePositions: []byte("[1]"), CreatedAt: now}))
					require.NoError(t, s.MemoryEmbeddingUpsert(ctx, db.MemoryEmbedding{ScopeID: scope, Revision: int64(r), EntryNo: int32(e),
						Model: "m", Dimensions: 1, Embedding: []byte{0, 0, 128, 63}, CreatedAt: now}))
				}
			}
		}
		write("many", 503, 1)
		write("wide", 3, 600)
		write("few", 2, 1)
		m := coordinator.MaintenanceHandler{Ledger: coordinator.NewLedger(s), Tasks: lifecycle.Retention{Store: s, MemoryRevisions: 2}.Tasks()}
		p, err := m.Prepare(ctx, db.WorkItem{})
		require.NoError(t, err)
		require.Equal(t, int64(501+1), p.Result.Payload.(map[string]any)["deleted_memory_revisions"])
		for scope, newest := range map[string]int64{"many": 503, "wide": 3, "few": 2} {
			for r := int64(1); r <= newest; r++ {
				entries, err := s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: r})
				require.NoError(t, err)
				vecs, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: r})
				require.NoError(t, err)
				if r > newest-2 {
					require.NotEmpty(t, entries, "%s revision %d is kept", scope, r)
					require.Len(t, vecs, len(entries), "%s revision %d keeps its vectors", scope, r)
				} else {
					require.Empty(t, entries, "%s revision %d's entries are gone", scope, r)
					require.Empty(t, vecs, "%s revision %d's vectors are gone", scope, r)
				}
			}
			latest, err := s.MemoryRevisionLatest(ctx, scope)
			require.NoError(t, err)
			require.Equal(t, newest, latest.Revision)
		}
		p, err = m.Prepare(ctx, db.WorkItem{})
		require.NoError(t, err)
		require.Equal(t, int64(0), p.Result.Payload.(map[string]any)["deleted_memory_revisions"])
	})
}
