package experience

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/sources"
)

// TestFitOutcomes: the budget counts task outcomes only (the others are not sent); the window ends just before the
// first outcome that does not fit, and a single outcome over the budget is cut for the provider.
func TestFitOutcomes(t *testing.T) {
	outcome := []byte(`{"kind":"task-outcome"}`)
	src := func(pos int64, n int, md []byte) db.Source {
		return db.Source{JournalPosition: pos, Content: strings.Repeat("a", n), Metadata: md}
	}
	p := sources.WindowPayload{CursorName: CursorName, After: 0, Through: 5, HighWatermark: 5}
	window := []db.Source{src(1, 5000, []byte("{}")), src(2, 300, outcome), src(3, 5000, []byte("{}")), src(4, 300, outcome), src(5, 10, []byte("{}"))}

	got, narrowed := fitOutcomes(window, p, 500)
	require.Equal(t, int64(3), narrowed.Through, "outcome 4 does not fit: the window ends before it")
	require.Len(t, got, 3)

	got, narrowed = fitOutcomes(window, p, 2000)
	require.Equal(t, p, narrowed, "everything fits")
	require.Len(t, got, 5)

	big := []db.Source{src(1, 3000, outcome), src(2, 10, outcome)}
	got, narrowed = fitOutcomes(big, sources.WindowPayload{CursorName: CursorName, After: 0, Through: 2, HighWatermark: 2}, 1000)
	require.Equal(t, int64(1), narrowed.Through)
	require.Len(t, got, 1)
	require.Less(t, len(got[0].Content), 3000, "cut for the provider")
	require.Len(t, big[0].Content, 3000, "the stored Source is intact")
}
