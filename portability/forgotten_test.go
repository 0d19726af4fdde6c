package portability_test

import (
	"bytes"
	"context"
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
