package portability_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
)

// TestMeasureExportImport measures export and import throughput (records per second) on each engine. It is not
// part of the default test run: set PC_PORTABILITY_MEASURE to the number of Sources (for example 10000). The scope
// also gets one Memory revision per 100 Sources with 20 entries each. It asserts only that the copy is complete;
// the rates are logged (docs/portability.md#measurements).
func TestMeasureExportImport(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PC_PORTABILITY_MEASURE"))
	if n <= 0 {
		t.Skip("set PC_PORTABILITY_MEASURE=<sources> to measure")
	}
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		scope := "measure"
		now, err := s.DBNow(ctx)
		require.NoError(t, err)
		_, err = s.SourceJournalHeadInsertIfAbsent(ctx, scope)
		require.NoError(t, err)
		const batch = 1000
		for from := 1; from <= n; from += batch {
			require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
				for pos := from; pos < from+batch && pos <= n; pos++ {
					if err := q.SourceInsert(ctx, db.Source{ScopeID: scope, JournalPosition: int64(pos), SourceID: fmt.Sprintf("src-%06d", pos),
						SourceType: "content", Content: fmt.Sprintf("Source number %d says something worth remembering about service %d.", pos, pos%37),
						Metadata: []byte(`{"n":` + strconv.Itoa(pos) + `}`), CreatedAt: now}); err != nil {
						return err
					}
				}
				return nil
			}))
		}
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			h, err := q.SourceJournalHeadLock(ctx, scope)
			if err != nil {
				return err
			}
			h.Position = int64(n)
			return q.SourceJournalHeadUpdate(ctx, h)
		}))
		for rev := int64(1); rev <= int64(n/100); rev++ {
			entries := make([]db.MemoryEntry, 20)
			for i := range entries {
				entries[i] = db.MemoryEntry{ScopeID: scope, Revision: rev, EntryNo: int32(i + 1), Content: fmt.Sprintf("Entry %d of revision %d.", i+1, rev),
					SourcePositions: []byte(`[` + strconv.FormatInt(rev*100, 10) + `]`), CreatedAt: now, EntryID: int64(i + 1)}
			}
			require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
				if err := q.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: scope, Revision: rev, WorkID: "00000000-0000-4000-8000-000000000001",
					CursorGeneration: rev - 1, WindowAfter: (rev - 1) * 100, WindowThrough: rev * 100, EntryCount: 20, CreatedAt: now,
					LastEntryID: 20, EvictedEntryIDs: []byte(`[]`)}); err != nil {
					return err
				}
				return q.MemoryEntryInsertMany(ctx, entries)
			}))
		}
		if n >= 100 {
			require.NoError(t, s.SourceCursorInsert(ctx, db.SourceCursor{ScopeID: scope, CursorName: memory.CursorName,
				Position: int64(n/100) * 100, Generation: int64(n / 100), UpdatedAt: now}))
		}

		var buf bytes.Buffer
		start := time.Now()
		counts, err := portability.Exporter{Store: s}.Export(ctx, scope, &buf, portability.Options{})
		require.NoError(t, err)
		exportTook := time.Since(start)
		records := counts.Sources + counts.Tombstones + counts.Cursors + counts.Revisions + counts.Entries + counts.Candidates + 3
		start = time.Now()
		res, err := portability.Importer{Store: s}.Import(ctx, bytes.NewReader(buf.Bytes()), portability.ImportOptions{AsScope: "measure-copy"})
		require.NoError(t, err)
		importTook := time.Since(start)
		require.Equal(t, counts, res.Counts)
		t.Logf("%d sources, %d records, %d bytes: export %v (%.0f records/s), import %v (%.0f records/s)", n, records, buf.Len(),
			exportTook.Round(time.Millisecond), float64(records)/exportTook.Seconds(), importTook.Round(time.Millisecond),
			float64(records)/importTook.Seconds())
	})
}
