package sources

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

func TestFitSplitsAWindowAtTheBudget(t *testing.T) {
	src := func(pos int64, n int, r string) db.Source {
		return db.Source{JournalPosition: pos, Content: strings.Repeat(r, n), Metadata: []byte("{}")}
	}
	p := WindowPayload{CursorName: "c", After: 10, Through: 14, HighWatermark: 20}
	srcs := []db.Source{src(11, 100, "a"), src(12, 100, "b"), src(13, 100, "c"), src(14, 100, "d")}

	fit, narrowed, truncated := Fit(srcs, p, 0)
	require.Len(t, fit, 4, "no budget")
	require.Equal(t, p, narrowed)
	require.False(t, truncated)

	fit, narrowed, truncated = Fit(srcs, p, 2*(100+2+sourceOverheadBytes)+10)
	require.Len(t, fit, 2)
	require.Equal(t, int64(12), narrowed.Through, "the cursor will advance to the last Source that fit")
	require.Equal(t, p.After, narrowed.After)
	require.False(t, truncated)

	// One Source over the budget: it goes alone, cut on a rune boundary for extraction; the caller's copy is intact.
	big := []db.Source{src(11, 1000, "界"), src(12, 10, "x")}
	fit, narrowed, truncated = Fit(big, p, 600)
	require.True(t, truncated)
	require.Len(t, fit, 1)
	require.Equal(t, int64(11), narrowed.Through)
	require.LessOrEqual(t, len(fit[0].Content), 600)
	require.True(t, utf8.ValidString(fit[0].Content))
	require.Len(t, big[0].Content, 3000, "the stored Source is not touched")
}

func TestCheckCursorSeesACommittedPrefix(t *testing.T) {
	p := WindowPayload{CursorName: "c", CursorGeneration: 3, After: 10, Through: 20}
	state, err := CheckCursor(db.SourceCursor{Position: 10, Generation: 3}, p)
	require.NoError(t, err)
	require.Equal(t, WindowReady, state)
	state, err = CheckCursor(db.SourceCursor{Position: 14, Generation: 4}, p)
	require.NoError(t, err)
	require.Equal(t, WindowAlreadyCommitted, state, "a prefix (10, 14] was committed by an earlier attempt")
	state, err = CheckCursor(db.SourceCursor{Position: 20, Generation: 4}, p)
	require.NoError(t, err)
	require.Equal(t, WindowAlreadyCommitted, state)
	_, err = CheckCursor(db.SourceCursor{Position: 14, Generation: 3}, p)
	require.Error(t, err, "a moved position without a new generation is a conflict")
	_, err = CheckCursor(db.SourceCursor{Position: 5, Generation: 2}, p)
	require.Error(t, err)
}
