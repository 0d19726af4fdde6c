package lifecycle_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/sources"
)

// TestRetentionErasesConsumedSourceContent: maintenance erases the content of Sources older than the setting once
// every cursor of their scope consumed them — in batches of 500 — and leaves unconsumed Sources and other scopes.
func TestRetentionErasesConsumedSourceContent(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		j := sources.NewJournal(s)
		capture := func(scope string, n int) {
			for i := range n {
				_, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: scope, Content: fmt.Sprintf("fact %d of %s", i, scope)})
				require.NoError(t, err)
			}
		}
		capture("old", 620)
		capture("unconsumed", 3)
		now, err := s.DBNow(ctx)
		require.NoError(t, err)
		require.NoError(t, s.SourceCursorInsert(ctx, db.SourceCursor{ScopeID: "old", CursorName: "memory-source-window", Position: 610, Generation: 1, UpdatedAt: now}))
		testutil.WaitDBPast(t, s, now.Add(20*time.Millisecond))

		m := coordinator.MaintenanceHandler{Ledger: coordinator.NewLedger(s),
			Tasks: lifecycle.Retention{Store: s, SourceContentAfter: 10 * time.Millisecond}.Tasks()}
		p, err := m.Prepare(ctx, db.WorkItem{})
		require.NoError(t, err)
		require.Equal(t, int64(610), p.Result.Payload.(map[string]any)["erased_source_contents"], "two batches")

		list, err := s.SourceListRange(ctx, db.SourceListRangeParams{ScopeID: "old", AfterPosition: 0, ThroughPosition: 620})
		require.NoError(t, err)
		require.Len(t, list, 620, "tombstones keep every position")
		for _, src := range list {
			if src.JournalPosition <= 610 {
				require.Empty(t, src.Content)
				require.False(t, src.ErasedAt.IsZero())
			} else {
				require.NotEmpty(t, src.Content, "not consumed yet")
			}
		}
		kept, err := s.SourceListRange(ctx, db.SourceListRangeParams{ScopeID: "unconsumed", AfterPosition: 0, ThroughPosition: 3})
		require.NoError(t, err)
		for _, src := range kept {
			require.NotEmpty(t, src.Content)
		}

		p, err = m.Prepare(ctx, db.WorkItem{})
		require.NoError(t, err)
		require.Equal(t, int64(0), p.Result.Payload.(map[string]any)["erased_source_contents"], "nothing twice")
		require.Empty(t, lifecycle.Retention{Store: s}.Tasks(), "off by default")
	})
}
