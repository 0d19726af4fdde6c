package portability_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/sources"
)

// hookStore runs hook on the export's second ExperienceCandidateListByScopeAfter call: the write pass reading the
// candidates, after it wrote the Sources and the Memory (the first call is the count pass).
type hookStore struct {
	db.Store
	calls int
	hook  func()
}

func (h *hookStore) ExperienceCandidateListByScopeAfter(ctx context.Context, p db.ExperienceCandidateListByScopeAfterParams) ([]db.ExperienceCandidate, error) {
	h.calls++
	if h.calls == 2 {
		h.hook()
	}
	return h.Store.ExperienceCandidateListByScopeAfter(ctx, p)
}

const secret = "The root password is hunter2."

// captureSecret captures the secret (source id "secret") and another Source into scope.
func captureSecret(t *testing.T, s db.Store, scope string) {
	t.Helper()
	j := sources.NewJournal(s)
	for _, c := range []sources.CaptureRequest{{ScopeID: scope, SourceID: "secret", Content: secret},
		{ScopeID: scope, SourceID: "other", Content: "Releases ship on Tuesdays."}} {
		_, err := j.Capture(context.Background(), c)
		require.NoError(t, err)
	}
}

// memoryTexts is every entry text of every Memory revision of scope.
func memoryTexts(t *testing.T, s db.Store, scope string) string {
	t.Helper()
	entries, err := s.MemoryEntryListByScopeAfter(context.Background(), db.MemoryEntryListByScopeAfterParams{ScopeID: scope, Limit: 1000})
	require.NoError(t, err)
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Content + "\n")
	}
	return b.String()
}

// requireStopped: the export failed with want and wrote no trailer, and an import refuses what it wrote.
func requireStopped(t *testing.T, s db.Store, err error, want error, out []byte) {
	t.Helper()
	require.ErrorIs(t, err, want)
	require.NotContains(t, string(out), `"type":"trailer"`)
	pe := importErr(t, s, out, "elsewhere")
	require.Equal(t, portability.CodeTruncated, pe.Code)
}

// TestExportDetectsAForget: a Source forgotten after the export's write pass read it is noticed — the Forget only
// turns it into a tombstone, which moves neither the journal head, the cursors nor the latest revision — and the
// export stops without its trailer, so the forgotten text never reaches another deployment as a live Source. Both
// when Memory had not read the Source (no redaction follows) and when it had (a redaction is queued).
func TestExportDetectsAForget(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		for _, consumed := range []bool{false, true} {
			scope := "unread"
			if consumed {
				scope = "read"
			}
			captureSecret(t, s, scope)
			if consumed {
				stop := runAll(t, l, s)
				flush(t, l, scope, memory.Consumer(3))
				stop()
			}
			hs := &hookStore{Store: s, hook: func() {
				res, err := (&lifecycle.Forgetter{Ledger: l, MaxAttempts: 3}).Forget(ctx, scope, "secret")
				require.NoError(t, err)
				require.Equal(t, consumed, res.Redaction != nil, "a redaction follows only when Memory read the Source")
			}}
			var out bytes.Buffer
			_, err := portability.Exporter{Store: hs}.Export(ctx, scope, &out, portability.Options{})
			require.GreaterOrEqual(t, hs.calls, 2, "the Forget ran during the write pass")
			requireStopped(t, s, err, portability.ErrScopeChanged, out.Bytes())
		}
	})
}

// TestExportRefusesWhileARedactionIsPending: after a Forget, Memory still holds text derived from the forgotten
// Source until its memory_redact operation has run, and an import does not carry the ledger, so nothing would ever
// redact a copy. The export refuses before it writes anything while the redaction is queued, and once the workers
// have run it, the export and its import hold none of that text.
func TestExportRefusesWhileARedactionIsPending(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		secretInMemory(t, l, s, "origin")
		require.Contains(t, memoryTexts(t, s, "origin"), "hunter2", "Memory read the secret")
		res, err := (&lifecycle.Forgetter{Ledger: l, MaxAttempts: 3}).Forget(ctx, "origin", "secret")
		require.NoError(t, err)
		require.NotNil(t, res.Redaction)

		var out bytes.Buffer
		_, err = portability.Exporter{Store: s}.Export(ctx, "origin", &out, portability.Options{Embeddings: true})
		require.ErrorIs(t, err, portability.ErrRedactionPending)
		require.ErrorContains(t, err, res.Redaction.WorkID, "the error names the operation to wait for")
		require.Zero(t, out.Len(), "refused before anything is written")

		stop := runAll(t, l, s)
		defer func() { stop() }()
		waitStatus(t, l, res.Redaction.WorkID, db.StatusSucceeded)
		stream := export(t, s, "origin", portability.Options{Embeddings: true})
		require.NotContains(t, string(stream), "hunter2")
		_, err = portability.Importer{Store: s}.Import(ctx, bytes.NewReader(stream), portability.ImportOptions{AsScope: "copy"})
		require.NoError(t, err)
		require.NotContains(t, memoryTexts(t, s, "copy"), "hunter2")
		m, err := memory.Reader{Store: s}.Current(ctx, "copy")
		require.NoError(t, err)
		require.NotEmpty(t, m.Entries, "the other Source's entry was copied")

		// A failed redaction holds the memory lane until an operator retries or cancels it: refused too.
		captureSecret(t, s, "broken")
		bad, err := l.Enqueue(ctx, coordinator.EnqueueRequest{LaneKey: memory.Consumer(3).LaneKey("broken"),
			Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
				return &coordinator.EnqueueSpec{Kind: lifecycle.KindRedact, PayloadVersion: lifecycle.RedactPayloadVersion, ScopeID: "broken",
					LogicalKey: lifecycle.RedactLogicalKey("broken", 0), Payload: lifecycle.RedactPayload{}, MaxAttempts: 1}, nil
			}})
		require.NoError(t, err)
		waitStatus(t, l, bad.Item.WorkID, db.StatusFailed)
		out.Reset()
		_, err = portability.Exporter{Store: s}.Export(ctx, "broken", &out, portability.Options{})
		require.ErrorIs(t, err, portability.ErrRedactionPending)
		require.ErrorContains(t, err, bad.Item.WorkID+" is failed")
		require.Zero(t, out.Len())
	})
}

// TestExportStopsWhenARedactionArrives: a Source already a tombstone whose text Memory still holds (the retention
// job erases consumed content and leaves Memory be) is forgotten while the scope is being read: its redaction
// arrives with no change to the Sources, and the export still stops without its trailer, so the stream is never a
// complete export of Memory that cites the forgotten text.
func TestExportStopsWhenARedactionArrives(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		secretInMemory(t, l, s, "origin")
		src, err := s.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: "origin", SourceID: "secret"})
		require.NoError(t, err)
		_, err = s.SourceErase(ctx, db.SourceEraseParams{ScopeID: "origin", SourceID: "secret"}) // as the retention job does
		require.NoError(t, err)
		hs := &hookStore{Store: s, hook: func() { // then the Forget
			res, err := (&lifecycle.Forgetter{Ledger: l, MaxAttempts: 3}).Forget(ctx, "origin", "secret")
			require.NoError(t, err)
			require.NotNil(t, res.Redaction)
			require.Equal(t, src.JournalPosition, res.JournalPosition)
		}}
		var out bytes.Buffer
		_, err = portability.Exporter{Store: hs}.Export(ctx, "origin", &out, portability.Options{})
		require.GreaterOrEqual(t, hs.calls, 2)
		requireStopped(t, s, err, portability.ErrRedactionPending, out.Bytes())
	})
}

// TestExportRefusesAScopeBeingErased: a scope whose erase is queued (no worker runs it) is refused before anything
// is written, and an erase requested while the scope is being read stops the export without its trailer: the
// scope would otherwise live on, whole, wherever the stream is imported.
func TestExportRefusesAScopeBeingErased(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		eraser := &lifecycle.Eraser{Ledger: l, MaxAttempts: 3}
		captureSecret(t, s, "queued")
		_, err := eraser.Erase(ctx, "queued", "tester")
		require.NoError(t, err)
		var out bytes.Buffer
		_, err = portability.Exporter{Store: s}.Export(ctx, "queued", &out, portability.Options{})
		require.ErrorIs(t, err, sources.ErrScopeErasing)
		require.Zero(t, out.Len(), "refused before anything is written")

		captureSecret(t, s, "during")
		hs := &hookStore{Store: s, hook: func() {
			_, err := eraser.Erase(ctx, "during", "tester")
			require.NoError(t, err)
		}}
		out.Reset()
		_, err = portability.Exporter{Store: hs}.Export(ctx, "during", &out, portability.Options{})
		require.GreaterOrEqual(t, hs.calls, 2)
		requireStopped(t, s, err, sources.ErrScopeErasing, out.Bytes())
	})
}

// TestRedactKindIsLifecycles: Exportable looks for unfinished operations of lifecycle's redaction kind, spelled out
// in this package (lifecycle imports it), and of no other.
func TestRedactKindIsLifecycles(t *testing.T) {
	require.Equal(t, lifecycle.KindRedact, portability.RedactKind)
}

// secretInMemory captures the secret into scope and flushes it into the scope's Memory, workers stopped after.
func secretInMemory(t *testing.T, l *coordinator.Ledger, s db.Store, scope string) {
	t.Helper()
	captureSecret(t, s, scope)
	stop := runAll(t, l, s)
	flush(t, l, scope, memory.Consumer(3))
	stop()
}

// TestRefusedExportIsNotRecorded: an export the service refuses (here a scope being erased) writes no scope_export
// operation: the audit trail lists only exports that ran.
func TestRefusedExportIsNotRecorded(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		captureSecret(t, s, "erasing")
		_, err := (&lifecycle.Eraser{Ledger: l, MaxAttempts: 3}).Erase(ctx, "erasing", "tester")
		require.NoError(t, err)
		var out bytes.Buffer
		_, err = (&portability.Service{Store: s, Ledger: l, MaxAttempts: 3}).Export(ctx, "erasing", "alice", false, &out)
		require.ErrorIs(t, err, sources.ErrScopeErasing)
		require.Zero(t, out.Len())
		recs, err := s.WorkItemList(ctx, db.WorkItemListParams{ScopeID: "erasing", Kinds: []string{portability.KindExport}, Limit: 10})
		require.NoError(t, err)
		require.Empty(t, recs, "no record of an export that did not run")
	})
}
