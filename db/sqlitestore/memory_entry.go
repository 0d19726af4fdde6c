package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) MemoryEntryInsert(ctx context.Context, e db.MemoryEntry) error {
	return errs.Err(q.w.MemoryEntryInsert(ctx, conv.MemoryEntryToGen[sqlitegen.MemoryEntryInsertParams](e)))
}

func (q *queries) MemoryEntryListByRevision(ctx context.Context, p db.MemoryEntryListByRevisionParams) ([]db.MemoryEntry, error) {
	rs, err := q.r.MemoryEntryListByRevision(ctx, sqlitegen.MemoryEntryListByRevisionParams(p))
	return conv.Many(errs, rs, err, conv.MemoryEntryFromGen)
}
