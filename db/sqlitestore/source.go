package sqlitestore

import (
	"context"
	"fmt"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// SourceInsertMany inserts the batch in one statement over a JSON array parameter (json_each).
func (q *queries) SourceInsertMany(ctx context.Context, ss []db.Source) error {
	if len(ss) == 0 {
		return nil
	}
	scope, err := conv.SourceInsertManyScope(ss)
	if err != nil {
		return err
	}
	rows, err := conv.SourceInsertManyJSON(ss)
	if err != nil {
		return err
	}
	n, err := errs.Rows(q.w.SourceInsertMany(ctx, sqlitegen.SourceInsertManyParams{ScopeID: scope, Rows: rows}))
	if err == nil && n != int64(len(ss)) {
		err = fmt.Errorf("sqlitestore: SourceInsertMany: %d of %d rows inserted", n, len(ss))
	}
	return err
}
