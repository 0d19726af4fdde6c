package mysqlstore

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// sourceManyMaxRows is the most rows one SourceInsertMany statement numbers (its digits cross join).
const sourceManyMaxRows = 1000

// datetime6 is the text a DATETIME(6) cast reads.
const datetime6 = "2006-01-02 15:04:05.000000"

// SourceInsertMany inserts the batch in one multi-row statement over parallel lists of text, 1,000 rows at most
// per statement.
func (q queries) SourceInsertMany(ctx context.Context, ss []db.Source) error {
	if len(ss) == 0 {
		return nil
	}
	scope, err := conv.SourceInsertManyScope(ss)
	if err != nil {
		return err
	}
	for len(ss) > 0 {
		batch := ss[:min(len(ss), sourceManyMaxRows)]
		ss = ss[len(batch):]
		n := len(batch)
		arg := mysqlgen.SourceInsertManyParams{ScopeID: scope, JournalPositions: make([]string, n),
			SourceIds: make([]string, n), SourceTypes: make([]string, n), Contents: make([]string, n),
			Metadatas: make([]string, n), CreatedAts: make([]string, n), ErasedAts: make([]string, n), RowCount: int64(n)}
		for i, s := range batch {
			arg.JournalPositions[i] = strconv.FormatInt(s.JournalPosition, 10)
			arg.SourceIds[i], arg.SourceTypes[i], arg.Contents[i] = s.SourceID, s.SourceType, s.Content
			arg.Metadatas[i] = hex.EncodeToString(s.Metadata)
			arg.CreatedAts[i] = conv.TimeToGen[time.Time](s.CreatedAt).Format(datetime6)
			if !s.ErasedAt.IsZero() {
				arg.ErasedAts[i] = conv.TimeToGen[time.Time](s.ErasedAt).Format(datetime6)
			}
		}
		rows, err := errs.Rows(q.q.SourceInsertMany(ctx, arg))
		if err != nil {
			return err
		}
		if rows != int64(n) {
			return fmt.Errorf("mysqlstore: SourceInsertMany: %d of %d rows inserted", rows, n)
		}
	}
	return nil
}
