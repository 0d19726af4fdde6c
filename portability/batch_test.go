package portability

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// TestSourceBatches: the import's SourceInsertMany batches keep the journal order, cover every Source once, hold at
// most sourceBatchRows Sources and, past their first Source, at most sourceBatchBytes of text.
func TestSourceBatches(t *testing.T) {
	require.Empty(t, sourceBatches(nil))
	small := make([]db.Source, 2500)
	for i := range small {
		small[i] = db.Source{JournalPosition: int64(i + 1), SourceID: "s", Content: "x", Metadata: []byte("{}")}
	}
	big := make([]db.Source, 100)
	for i := range big {
		big[i] = db.Source{JournalPosition: int64(i + 1), Content: strings.Repeat("y", 60<<10), Metadata: []byte("{}")}
	}
	huge := []db.Source{{JournalPosition: 1, Content: strings.Repeat("z", 3<<20)}, {JournalPosition: 2, Content: "a"}}
	for _, c := range []struct {
		name  string
		in    []db.Source
		sizes []int
	}{
		{"by rows", small, []int{1000, 1000, 500}},
		{"by bytes", big, []int{34, 34, 32}},
		{"one row beyond the bytes goes alone", huge, []int{1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sizes []int
			var pos int64
			for _, b := range sourceBatches(c.in) {
				sizes = append(sizes, len(b))
				n := 0
				for i, s := range b {
					pos++
					require.Equal(t, pos, s.JournalPosition, "in order, each once")
					if i > 0 {
						require.LessOrEqual(t, n+len(s.Content)+len(s.Metadata)+len(s.SourceID)+len(s.SourceType), sourceBatchBytes)
					}
					n += len(s.Content) + len(s.Metadata) + len(s.SourceID) + len(s.SourceType)
				}
			}
			require.EqualValues(t, len(c.in), pos)
			require.Equal(t, c.sizes, sizes)
		})
	}
}
