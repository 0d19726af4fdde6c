package lifecycle_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// runAll runs a worker with every handler of the runtime (memory, experience, redact, erase) until stop.
func runAll(t *testing.T, l *coordinator.Ledger, s db.Store) (stop func()) {
	t.Helper()
	p := provider.NewLocal()
	w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w-all", Concurrency: 3, Poll: 10 * time.Millisecond,
		RetryBase: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond, Logger: zerolog.Nop()},
		&memory.Handler{Store: s, Provider: p, Embedder: provider.NewLocalEmbedder()}, &experience.Handler{Store: s, Provider: p},
		&memory.EmbedHandler{Ledger: l, Embedder: provider.NewLocalEmbedder()},
		&lifecycle.RedactHandler{Ledger: l}, &lifecycle.EraseHandler{Ledger: l, Poll: 10 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

type entry struct {
	Content   string
	Positions []int64
}

func latest(t *testing.T, s db.Store, scope string) (int64, []entry) {
	t.Helper()
	m, err := memory.Reader{Store: s}.Current(context.Background(), scope)
	require.NoError(t, err)
	var out []entry
	for _, e := range m.Entries {
		var pos []int64
		require.NoError(t, json.Unmarshal(e.SourcePositions, &pos))
		out = append(out, entry{e.Content, pos})
	}
	return m.Revision, out
}

func flushBoth(t *testing.T, l *coordinator.Ledger, scope string) {
	t.Helper()
	for _, c := range []sources.Consumer{memory.Consumer(3), experience.Consumer(3)} {
		res, err := l.Enqueue(context.Background(), c.EnqueueRequest(scope))
		require.NoError(t, err)
		require.False(t, res.Idle)
		waitStatus(t, l, res.Item.WorkID, db.StatusSucceeded)
	}
}

// requireNoVectorOf fails if any row of pc_memory_embeddings holds the local embedder's vector of one of texts: a
// vector is derived from its text (it can be inverted to much of it), so a forgotten text's vector must go too.
func requireNoVectorOf(t *testing.T, s db.Store, texts ...string) {
	t.Helper()
	sqlDB := enginetest.OpenSQLDB(t, enginetest.URLOf(t, s))
	rows, err := sqlDB.Query("SELECT embedding FROM pc_memory_embeddings")
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var b []byte
		require.NoError(t, rows.Scan(&b))
		for _, text := range texts {
			require.NotEqual(t, provider.EncodeVector(provider.LocalVector(text)), b, "the vector of %q is still stored", text)
		}
		n++
	}
	require.NoError(t, rows.Err())
	require.Positive(t, n, "vectors were read")
}

// TestForgetSourceRedactsMemory: forgetting a Source erases its content at once (a tombstone keeps its position),
// withdraws the candidates citing it, and a memory_redact operation in the scope's memory lane writes a revision
// without the entries only it supported — an entry also supported by another Source stays, without the position.
// Every earlier revision is scrubbed the same way, so the forgotten content is in no table any more — nor the
// vectors of its entries, while the surviving entry's vector is carried to the new revision. Forgetting
// again is idempotent; a Source Memory has not consumed yet needs no redaction, and the next window passes nothing
// of its tombstone to the provider.
func TestForgetSourceRedactsMemory(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		j := sources.NewJournal(s)
		for _, c := range []sources.CaptureRequest{
			{ScopeID: "team", SourceID: "a", Content: "The deploy script lives in ops/deploy.sh."},
			{ScopeID: "team", SourceID: "b", Content: "Releases ship on Tuesdays."},
			{ScopeID: "team", SourceID: "c", Content: "The deploy script lives in ops/deploy.sh."},
			{ScopeID: "team", SourceID: "d", Content: "Always run the smoke tests before a release.", Metadata: json.RawMessage(`{"kind":"task-outcome"}`)},
		} {
			_, err := j.Capture(ctx, c)
			require.NoError(t, err)
		}
		stop := runAll(t, l, s)
		defer func() { stop() }()
		flushBoth(t, l, "team")
		rev, entries := latest(t, s, "team")
		require.Equal(t, int64(1), rev)
		require.Equal(t, []entry{{"The deploy script lives in ops/deploy.sh.", []int64{1, 3}}, {"Releases ship on Tuesdays.", []int64{2}},
			{"Always run the smoke tests before a release.", []int64{4}}}, entries)
		cands, err := s.ExperienceCandidateList(ctx, db.ExperienceCandidateListParams{ScopeID: "team", Limit: 10})
		require.NoError(t, err)
		require.Len(t, cands, 1)
		vecs, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "team", Revision: 1})
		require.NoError(t, err)
		require.Len(t, vecs, 3, "every entry has its vector")

		f := &lifecycle.Forgetter{Ledger: l, MaxAttempts: 3}
		for _, id := range []string{"b", "c", "d"} {
			res, err := f.Forget(ctx, "team", id)
			require.NoError(t, err)
			require.NotNil(t, res.Redaction, id)
			require.Equal(t, lifecycle.KindRedact, res.Redaction.Kind)
			require.Equal(t, memory.Consumer(1).LaneKey("team"), res.Redaction.LaneKey, "ordered with the scope's flushes")
			done := waitStatus(t, l, res.Redaction.WorkID, db.StatusSucceeded)
			require.Equal(t, "redacted", done.ResultCode, id)
		}
		rev, entries = latest(t, s, "team")
		require.Equal(t, int64(4), rev, "one revision per redaction")
		require.Equal(t, []entry{{"The deploy script lives in ops/deploy.sh.", []int64{1}}}, entries,
			"only-supported entries left; the shared one keeps its other Source")
		var r lifecycle.RedactResult
		last, err := s.MemoryRevisionLatest(ctx, "team")
		require.NoError(t, err)
		kept, err := s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "team", Revision: 4})
		require.NoError(t, err)
		require.EqualValues(t, 1, kept[0].EntryID, "a redaction keeps the surviving entry's id")
		require.EqualValues(t, 3, last.LastEntryID, "and the scope's highest id")
		require.JSONEq(t, `[]`, string(last.EvictedEntryIDs), "and evicts nothing")
		item, err := l.Get(ctx, last.WorkID)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(item.ResultPayload, &r))
		require.Equal(t, lifecycle.RedactResult{Type: "memory_redact", SourcePosition: 4, RemovedEntries: 1, ScrubbedEntries: 3,
			Memory: &memory.RevisionResult{Revision: 4}}, r, "revisions 1 and 2 were scrubbed too")
		for rev, want := range map[int64][]entry{1: {{"The deploy script lives in ops/deploy.sh.", []int64{1}}},
			2: {{"The deploy script lives in ops/deploy.sh.", []int64{1}}}, 3: {{"The deploy script lives in ops/deploy.sh.", []int64{1}}}} {
			es, err := s.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "team", Revision: rev})
			require.NoError(t, err)
			var got []entry
			for _, e := range es {
				var pos []int64
				require.NoError(t, json.Unmarshal(e.SourcePositions, &pos))
				got = append(got, entry{e.Content, pos})
			}
			require.Equal(t, want, got, "history of revision %d", rev)
		}
		requireNowhere(t, s, "Releases ship", "smoke tests")
		requireNoVectorOf(t, s, "Releases ship on Tuesdays.", "Always run the smoke tests before a release.")
		vecs, err = s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "team", Revision: 4})
		require.NoError(t, err)
		require.Len(t, vecs, 1, "the surviving entry keeps its vector in the new revision")
		require.Equal(t, provider.EncodeVector(provider.LocalVector("The deploy script lives in ops/deploy.sh.")), vecs[0].Embedding)

		srcs, err := s.SourceListRange(ctx, db.SourceListRangeParams{ScopeID: "team", AfterPosition: 0, ThroughPosition: 4})
		require.NoError(t, err)
		require.Len(t, srcs, 4, "tombstones keep the positions")
		for _, src := range srcs[1:] {
			require.Empty(t, src.Content)
			require.JSONEq(t, `{}`, string(src.Metadata))
			require.False(t, src.ErasedAt.IsZero())
		}
		require.NotEmpty(t, srcs[0].Content)
		cand, err := s.ExperienceCandidateGet(ctx, cands[0].CandidateID)
		require.NoError(t, err)
		require.Equal(t, experience.StatusWithdrawn, cand.Status)
		require.Equal(t, cands[0].StateVersion+1, cand.StateVersion, "a reviewer's version goes stale")

		again, err := f.Forget(ctx, "team", "b")
		require.NoError(t, err)
		require.NotNil(t, again.Redaction, "Memory consumed it: the redaction runs again")
		require.Equal(t, "nothing_to_redact", waitStatus(t, l, again.Redaction.WorkID, db.StatusSucceeded).ResultCode)
		rev, _ = latest(t, s, "team")
		require.Equal(t, int64(4), rev, "no new revision")
		_, err = f.Forget(ctx, "team", "nope")
		require.ErrorIs(t, err, lifecycle.ErrSourceNotFound)
		_, err = f.Forget(ctx, "other", "a")
		require.ErrorIs(t, err, lifecycle.ErrSourceNotFound, "scopes are separate")

		// Not consumed yet: no redaction; the next window reads the tombstone and extracts nothing from it.
		_, err = j.Capture(ctx, sources.CaptureRequest{ScopeID: "team", SourceID: "e", Content: "The staging database is PostgreSQL."})
		require.NoError(t, err)
		res, err := f.Forget(ctx, "team", "e")
		require.NoError(t, err)
		require.Nil(t, res.Redaction)
		flushBoth(t, l, "team")
		_, entries = latest(t, s, "team")
		require.Equal(t, []entry{{"The deploy script lives in ops/deploy.sh.", []int64{1}}}, entries)
		again2, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: "team", SourceID: "e", Content: "new text"})
		require.NoError(t, err)
		require.False(t, again2.Created, "a forgotten source id is not reused")
	})
}

var errKeyInsert = errors.New("test: the key insert failed")

// TestForgetIsOneTransaction: the tombstone, the withdrawn candidates and the redaction commit together. When the
// redaction's enqueue fails (a crash at that point does the same), the Source is still whole and no candidate is
// withdrawn, so the caller's retry does it all; never a tombstone whose text Memory holds with no redaction queued.
func TestForgetIsOneTransaction(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		_, err := sources.NewJournal(s).Capture(ctx, sources.CaptureRequest{ScopeID: "team", SourceID: "d",
			Content: "Always run the smoke tests before a release.", Metadata: json.RawMessage(`{"kind":"task-outcome"}`)})
		require.NoError(t, err)
		stop := runAll(t, l, s)
		flushBoth(t, l, "team")
		stop()
		cands, err := s.ExperienceCandidateList(ctx, db.ExperienceCandidateListParams{ScopeID: "team", Limit: 10})
		require.NoError(t, err)
		require.Len(t, cands, 1)

		_, err = (&lifecycle.Forgetter{Ledger: coordinator.NewLedger(enginetest.FailEnqueueWrites(s, errKeyInsert)), MaxAttempts: 3}).Forget(ctx, "team", "d")
		require.ErrorIs(t, err, errKeyInsert)
		src, err := s.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: "team", SourceID: "d"})
		require.NoError(t, err)
		require.True(t, src.ErasedAt.IsZero(), "the erase rolled back with the enqueue")
		require.Equal(t, "Always run the smoke tests before a release.", src.Content)
		cand, err := s.ExperienceCandidateGet(ctx, cands[0].CandidateID)
		require.NoError(t, err)
		require.Equal(t, cands[0].Status, cand.Status, "nothing withdrawn")

		res, err := (&lifecycle.Forgetter{Ledger: l, MaxAttempts: 3}).Forget(ctx, "team", "d")
		require.NoError(t, err)
		require.NotNil(t, res.Redaction, "the retry queues the redaction")
		src, err = s.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: "team", SourceID: "d"})
		require.NoError(t, err)
		require.False(t, src.ErasedAt.IsZero())
		cand, err = s.ExperienceCandidateGet(ctx, cands[0].CandidateID)
		require.NoError(t, err)
		require.Equal(t, experience.StatusWithdrawn, cand.Status)
	})
}
