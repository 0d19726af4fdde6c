package app

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/sources"
)

// fillForCopy gives store two scopes: Sources (one forgotten), a Memory revision with an entry and its vector, a
// cursor and an approved candidate in one, a lone Source in the other.
func fillForCopy(t *testing.T, store db.Store) {
	t.Helper()
	ctx := context.Background()
	j := sources.NewJournal(store)
	for _, c := range []sources.CaptureRequest{{ScopeID: "team/a", SourceID: "s1", Content: "Releases ship on Tuesdays."},
		{ScopeID: "team/a", SourceID: "s2", Content: "Secrets live in the vault.", Metadata: []byte(`{"k":"v"}`)},
		{ScopeID: "team/b", SourceID: "s1", Content: "The staging database is PostgreSQL."}} {
		_, err := j.Capture(ctx, c)
		require.NoError(t, err)
	}
	_, err := store.SourceErase(ctx, db.SourceEraseParams{ScopeID: "team/a", SourceID: "s2"})
	require.NoError(t, err)
	now, err := store.DBNow(ctx)
	require.NoError(t, err)
	const work = "00000000-0000-4000-8000-000000000001"
	require.NoError(t, store.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: "team/a", Revision: 1, WorkID: work, WindowThrough: 2,
		EntryCount: 1, CreatedAt: now, LastEntryID: 1, EvictedEntryIDs: []byte(`[]`)}))
	require.NoError(t, store.MemoryEntryInsert(ctx, db.MemoryEntry{ScopeID: "team/a", Revision: 1, EntryNo: 1, Content: "Releases ship on Tuesdays.",
		SourcePositions: []byte(`[1]`), CreatedAt: now, EntryID: 1}))
	require.NoError(t, store.MemoryEmbeddingUpsert(ctx, db.MemoryEmbedding{ScopeID: "team/a", Revision: 1, EntryNo: 1, Model: "local",
		Dimensions: 2, Embedding: []byte{0, 0, 128, 63, 0, 0, 0, 64}, CreatedAt: now}))
	require.NoError(t, store.SourceCursorInsert(ctx, db.SourceCursor{ScopeID: "team/a", CursorName: memory.CursorName, Position: 2,
		Generation: 1, UpdatedAt: now}))
	require.NoError(t, store.ExperienceCandidateInsert(ctx, db.ExperienceCandidate{CandidateID: "6371a5a9-0421-4a17-afc7-23713cdfaef0",
		ScopeID: "team/a", WorkID: work, Title: "Ship on Tuesdays", Lesson: "Releases ship on Tuesdays.", CitedPositions: []byte(`[1]`),
		Status: experience.StatusApproved, StateVersion: 2, CreatedAt: now, UpdatedAt: now}))
}

func exported(t *testing.T, store db.Store, scope string) []byte {
	t.Helper()
	var b bytes.Buffer
	_, err := portability.Exporter{Store: store}.Export(context.Background(), scope, &b, portability.Options{Embeddings: true})
	require.NoError(t, err)
	return b.Bytes()
}

// TestServerCopyEngineToEngine: `server copy` moves every scope of a SQLite deployment into each engine, verified
// record by record, and says what it does not carry (the ledger, the skills); a second copy into the now non-empty target and a copy into an unmigrated database are refused.
func TestServerCopyEngineToEngine(t *testing.T) {
	from := enginetest.NewDatabase(t, db.EngineSQLite)
	_, err := runRoot(t, "server", "migrate", "--database-url", from)
	require.NoError(t, err)
	src := enginetest.OpenStore(t, enginetest.ParseURL(t, from))
	fillForCopy(t, src)
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		to := enginetest.NewDatabase(t, engine)
		_, err := runRoot(t, "server", "copy", "--from", from, "--to", to)
		require.ErrorContains(t, err, "server migrate", "an unmigrated target is refused")
		_, err = runRoot(t, "server", "migrate", "--database-url", to)
		require.NoError(t, err)
		out, err := runRoot(t, "server", "copy", "--from", from, "--to", to)
		require.NoError(t, err, out)
		require.Contains(t, out, "copied scope team/a: 1 sources, 1 tombstones, 1 revisions, 1 entries, 1 candidates")
		require.Contains(t, out, "copied 2 scopes")
		require.Contains(t, out, "not copied: the operation ledger", "the copy says what it leaves behind")
		require.Contains(t, out, "the skills (revisions, targets, publications)")
		require.Contains(t, out, "must be registered, enrolled and published to again")
		dst := enginetest.OpenStore(t, enginetest.ParseURL(t, to))
		for _, scope := range []string{"team/a", "team/b"} {
			require.Equal(t, recordsDigest(exported(t, src, scope)), recordsDigest(exported(t, dst, scope)), scope)
		}
		_, err = runRoot(t, "server", "copy", "--from", from, "--to", to)
		require.ErrorContains(t, err, "is not empty")
	})
}

// migratedCopySource is a migrated SQLite deployment filled by fillForCopy: its URL and store.
func migratedCopySource(t *testing.T) (string, db.Store) {
	t.Helper()
	from := enginetest.NewDatabase(t, db.EngineSQLite)
	_, err := runRoot(t, "server", "migrate", "--database-url", from)
	require.NoError(t, err)
	src := enginetest.OpenStore(t, enginetest.ParseURL(t, from))
	fillForCopy(t, src)
	return from, src
}

// TestServerCopySkipsScopesBeingErased: a scope whose erase is queued (no worker runs it) is not copied — the erase
// would remove it, a copy would keep it live — and the copy lists it, as text and in the JSON report; the other
// scopes are copied.
func TestServerCopySkipsScopesBeingErased(t *testing.T) {
	from, src := migratedCopySource(t)
	_, err := (&lifecycle.Eraser{Ledger: coordinator.NewLedger(src), MaxAttempts: 3}).Erase(context.Background(), "team/b", "tester")
	require.NoError(t, err)
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		to := enginetest.NewDatabase(t, engine)
		_, err := runRoot(t, "server", "migrate", "--database-url", to)
		require.NoError(t, err)
		out, err := runRoot(t, "server", "copy", "--from", from, "--to", to)
		require.NoError(t, err, out)
		require.Contains(t, out, "copied scope team/a:")
		require.Contains(t, out, "skipped scope team/b: being erased")
		require.Contains(t, out, "copied 1 scopes")
		require.Contains(t, out, "1 skipped")
		dst := enginetest.OpenStore(t, enginetest.ParseURL(t, to))
		scopes, err := listScopes(context.Background(), dst, 0)
		require.NoError(t, err)
		require.Equal(t, []string{"team/a"}, scopes, "the scope being erased is not in the target")

		again := enginetest.NewDatabase(t, engine)
		_, err = runRoot(t, "server", "migrate", "--database-url", again)
		require.NoError(t, err)
		out, err = runRoot(t, "server", "copy", "--from", from, "--to", again, "-o", "json")
		require.NoError(t, err, out)
		var rep CopyReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		require.Len(t, rep.Scopes, 1)
		require.Equal(t, "team/a", rep.Scopes[0].ScopeID)
		require.Equal(t, []SkippedCopy{{ScopeID: "team/b", Reason: skipErasing}}, rep.Skipped)
		require.Equal(t, notCopied, rep.NotCopied)
	})
}

// TestServerCopyRefusesAPendingRedaction: a scope with an unfinished memory_redact operation (its Memory may still
// hold text of a forgotten Source, and the ledger is not copied) fails the copy before anything is written, with
// an error that names the operation.
func TestServerCopyRefusesAPendingRedaction(t *testing.T) {
	ctx := context.Background()
	from, src := migratedCopySource(t)
	// The second scope in copy order, so a copy that checked scope by scope would have written the first. Memory has
	// read its Source, so forgetting it queues a redaction; no worker runs it.
	now, err := src.DBNow(ctx)
	require.NoError(t, err)
	require.NoError(t, src.SourceCursorInsert(ctx, db.SourceCursor{ScopeID: "team/b", CursorName: memory.CursorName, Position: 1,
		Generation: 1, UpdatedAt: now}))
	res, err := (&lifecycle.Forgetter{Ledger: coordinator.NewLedger(src), MaxAttempts: 3}).Forget(ctx, "team/b", "s1")
	require.NoError(t, err)
	require.NotNil(t, res.Redaction)
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		to := enginetest.NewDatabase(t, engine)
		_, err := runRoot(t, "server", "migrate", "--database-url", to)
		require.NoError(t, err)
		out, err := runRoot(t, "server", "copy", "--from", from, "--to", to)
		require.ErrorIs(t, err, portability.ErrRedactionPending, out)
		require.ErrorContains(t, err, res.Redaction.WorkID)
		dst := enginetest.OpenStore(t, enginetest.ParseURL(t, to))
		scopes, err := listScopes(ctx, dst, 0)
		require.NoError(t, err)
		require.Empty(t, scopes, "nothing was written")
	})
}
