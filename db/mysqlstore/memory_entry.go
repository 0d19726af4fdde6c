package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) MemoryEntryInsert(ctx context.Context, e db.MemoryEntry) error {
	return errs.Err(q.q.MemoryEntryInsert(ctx, conv.MemoryEntryToGen[mysqlgen.MemoryEntryInsertParams](e)))
}

func (q queries) MemoryEntryListByRevision(ctx context.Context, p db.MemoryEntryListByRevisionParams) ([]db.MemoryEntry, error) {
	rs, err := q.q.MemoryEntryListByRevision(ctx, mysqlgen.MemoryEntryListByRevisionParams(p))
	return conv.Many(errs, rs, err, conv.MemoryEntryFromGen)
}
