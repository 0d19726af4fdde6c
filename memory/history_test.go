package memory_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/sources"
)

func contents(es []db.MemoryEntry) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Content)
	}
	return out
}

// TestHistoryListsReadsAndDiffsEveryRevision commits revisions through the flush handler on every engine and reads
// them back: the list (newest first, paged), any revision, and the diff between two.
func TestHistoryListsReadsAndDiffsEveryRevision(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		flush := func(contents ...string) db.WorkItem {
			for _, c := range contents {
				_, err := e.journal.Capture(ctx, sources.CaptureRequest{ScopeID: "hist", Content: c})
				require.NoError(t, err)
			}
			_, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("hist"))
			require.NoError(t, err)
			done := e.runOne(t, e.handler)
			require.Equal(t, "processed", done.ResultCode)
			return done
		}
		op1 := flush("Staging uses PostgreSQL 16.", "The deploy window is Friday.")
		op2 := flush("Alice owns billing.", "staging uses postgresql 16") // a restatement: new position
		// A third revision written directly: one entry gone (as a redaction would leave it).
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			now, err := q.DBNow(ctx)
			require.NoError(t, err)
			require.NoError(t, q.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: "hist", Revision: 3,
				WorkID: uuid.NewString(), CursorGeneration: 1, WindowAfter: 4, WindowThrough: 4, EntryCount: 1, CreatedAt: now}))
			return q.MemoryEntryInsert(ctx, db.MemoryEntry{ScopeID: "hist", Revision: 3, EntryNo: 1,
				Content: "Alice owns billing.", SourcePositions: []byte(`[3]`), CreatedAt: now})
		}))

		r := memory.Reader{Store: s}
		revs, err := r.Revisions(ctx, "hist", 0, 10)
		require.NoError(t, err)
		require.Len(t, revs, 3)
		require.Equal(t, []int64{3, 2, 1}, []int64{revs[0].Revision, revs[1].Revision, revs[2].Revision})
		require.Equal(t, op2.WorkID, revs[1].WorkID)
		require.Equal(t, op1.WorkID, revs[2].WorkID)
		require.Equal(t, [2]int64{0, 2}, [2]int64{revs[2].WindowAfter, revs[2].WindowThrough})
		require.Equal(t, [2]int64{2, 4}, [2]int64{revs[1].WindowAfter, revs[1].WindowThrough})
		require.EqualValues(t, 3, revs[1].EntryCount)
		page, err := r.Revisions(ctx, "hist", 2, 10)
		require.NoError(t, err)
		require.Len(t, page, 1)
		require.EqualValues(t, 1, page[0].Revision)

		m, err := r.At(ctx, "hist", 1)
		require.NoError(t, err)
		require.Equal(t, []string{"Staging uses PostgreSQL 16.", "The deploy window is Friday."}, contents(m.Entries))
		_, err = r.At(ctx, "hist", 4)
		require.ErrorIs(t, err, memory.ErrRevisionNotFound)

		d, err := r.Diff(ctx, "hist", 1, 2)
		require.NoError(t, err)
		require.Equal(t, []string{"Alice owns billing."}, contents(d.Added))
		require.Empty(t, d.Removed)
		require.Len(t, d.Changed, 1)
		require.JSONEq(t, `[1]`, string(d.Changed[0].From.SourcePositions))
		require.JSONEq(t, `[1,4]`, string(d.Changed[0].To.SourcePositions))

		d, err = r.Diff(ctx, "hist", 2, 3)
		require.NoError(t, err)
		require.Empty(t, d.Added)
		require.Empty(t, d.Changed, "same text, same positions")
		require.Equal(t, []string{"Staging uses PostgreSQL 16.", "The deploy window is Friday."}, contents(d.Removed))

		d, err = r.Diff(ctx, "hist", 0, 1)
		require.NoError(t, err)
		require.Len(t, d.Added, 2)
		_, err = r.Diff(ctx, "hist", 1, 9)
		require.ErrorIs(t, err, memory.ErrRevisionNotFound)
	})
}

// TestCorrectedFactReplacesTheOldOne: a Source that corrects a fact (same subject, new value) supersedes the entry
// in the next revision — the old text is gone, the entry keeps its number and carries the correcting Source's
// position — and the diff reports the pair as changed; the earlier revision still reads as it was.
func TestCorrectedFactReplacesTheOldOne(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		flush := func(contents ...string) {
			for _, c := range contents {
				_, err := e.journal.Capture(ctx, sources.CaptureRequest{ScopeID: "fix", Content: c})
				require.NoError(t, err)
			}
			_, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("fix"))
			require.NoError(t, err)
			require.Equal(t, "processed", e.runOne(t, e.handler).ResultCode)
		}
		flush("Staging uses PostgreSQL 16.", "用户每天早上八点开会。", "Alice owns billing.")
		flush("Staging uses PostgreSQL 17.", "用户每天早上九点开会。")

		r := memory.Reader{Store: s}
		m, err := r.Current(ctx, "fix")
		require.NoError(t, err)
		require.EqualValues(t, 2, m.Revision)
		require.Equal(t, []string{"Staging uses PostgreSQL 17.", "用户每天早上九点开会。", "Alice owns billing."}, contents(m.Entries))
		require.JSONEq(t, `[4]`, string(m.Entries[0].SourcePositions))
		require.JSONEq(t, `[5]`, string(m.Entries[1].SourcePositions))

		d, err := r.Diff(ctx, "fix", 1, 2)
		require.NoError(t, err)
		require.Empty(t, d.Added)
		require.Empty(t, d.Removed)
		require.Len(t, d.Changed, 2)
		require.Equal(t, "Staging uses PostgreSQL 16.", d.Changed[0].From.Content)
		require.Equal(t, "Staging uses PostgreSQL 17.", d.Changed[0].To.Content)
		require.Equal(t, "用户每天早上八点开会。", d.Changed[1].From.Content)
		require.Equal(t, "用户每天早上九点开会。", d.Changed[1].To.Content)

		old, err := r.At(ctx, "fix", 1)
		require.NoError(t, err)
		require.Equal(t, "Staging uses PostgreSQL 16.", old.Entries[0].Content)
	})
}

// TestQualifiedCorrectionReplacesTheOldOne: the issue 35 scenario end to end — after "Staging uses PostgreSQL 16.",
// the Source "Staging uses PostgreSQL 17 now." supersedes the entry, so Memory and the assembled context hold only
// the corrected fact.
func TestQualifiedCorrectionReplacesTheOldOne(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		flush := func(c string) {
			_, err := e.journal.Capture(ctx, sources.CaptureRequest{ScopeID: "fix", Content: c})
			require.NoError(t, err)
			_, err = e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("fix"))
			require.NoError(t, err)
			require.Equal(t, "processed", e.runOne(t, e.handler).ResultCode)
		}
		flush("Staging uses PostgreSQL 16.")
		flush("Staging uses PostgreSQL 17 now.")

		m, err := memory.Reader{Store: s}.Current(ctx, "fix")
		require.NoError(t, err)
		require.Equal(t, []string{"Staging uses PostgreSQL 17 now."}, contents(m.Entries))
		got, err := memory.Assembler{Memory: memory.Reader{Store: s}, Lessons: experience.Reviews{Store: s}}.
			Assemble(ctx, "fix", "staging PostgreSQL", 1000)
		require.NoError(t, err)
		var texts []string
		for _, it := range got.Items {
			texts = append(texts, it.Content)
		}
		require.Equal(t, []string{"Staging uses PostgreSQL 17 now."}, texts)
	})
}
