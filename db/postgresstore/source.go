package postgresstore

import (
	"context"
	"fmt"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// SourceInsertMany inserts the batch in one statement over parallel arrays (unnest).
func (q queries) SourceInsertMany(ctx context.Context, ss []db.Source) error {
	if len(ss) == 0 {
		return nil
	}
	scope, err := conv.SourceInsertManyScope(ss)
	if err != nil {
		return err
	}
	n := len(ss)
	arg := postgresgen.SourceInsertManyParams{ScopeID: scope, JournalPositions: make([]int64, n),
		SourceIds: make([]string, n), SourceTypes: make([]string, n), Contents: make([]string, n),
		Metadatas: make([][]byte, n), CreatedAts: make([]time.Time, n), Erased: make([]bool, n), ErasedAts: make([]time.Time, n)}
	for i, s := range ss {
		arg.JournalPositions[i], arg.SourceIds[i], arg.SourceTypes[i] = s.JournalPosition, s.SourceID, s.SourceType
		arg.Contents[i], arg.Metadatas[i] = s.Content, s.Metadata
		arg.CreatedAts[i] = conv.TimeToGen[time.Time](s.CreatedAt)
		if !s.ErasedAt.IsZero() {
			arg.Erased[i], arg.ErasedAts[i] = true, conv.TimeToGen[time.Time](s.ErasedAt)
		}
	}
	rows, err := errs.Rows(q.q.SourceInsertMany(ctx, arg))
	if err == nil && rows != int64(n) {
		err = fmt.Errorf("postgresstore: SourceInsertMany: %d of %d rows inserted", rows, n)
	}
	return err
}
