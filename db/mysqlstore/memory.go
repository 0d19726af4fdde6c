package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func memoryRevisionFromGen(r mysqlgen.PcMemoryRevision) db.MemoryRevision {
	return db.MemoryRevision{
		ScopeID:          r.ScopeID,
		Revision:         r.Revision,
		WorkID:           r.WorkID,
		CursorGeneration: r.CursorGeneration,
		WindowAfter:      r.WindowAfter,
		WindowThrough:    r.WindowThrough,
		EntryCount:       r.EntryCount,
		CreatedAt:        r.CreatedAt.UTC(),
	}
}

func (q *queries) MemoryRevisionInsert(ctx context.Context, r db.MemoryRevision) error {
	return interpretError(q.q.MemoryRevisionInsert(ctx, mysqlgen.MemoryRevisionInsertParams{
		ScopeID:          r.ScopeID,
		Revision:         r.Revision,
		WorkID:           r.WorkID,
		CursorGeneration: r.CursorGeneration,
		WindowAfter:      r.WindowAfter,
		WindowThrough:    r.WindowThrough,
		EntryCount:       r.EntryCount,
		CreatedAt:        ts(r.CreatedAt),
	}))
}

func (q *queries) MemoryRevisionLatest(ctx context.Context, scopeID string) (db.MemoryRevision, error) {
	r, err := q.q.MemoryRevisionLatest(ctx, scopeID)
	if err != nil {
		return db.MemoryRevision{}, interpretError(err)
	}
	return memoryRevisionFromGen(r), nil
}

func (q *queries) MemoryRevisionListByScope(ctx context.Context, scopeID string) ([]db.MemoryRevision, error) {
	rows, err := q.q.MemoryRevisionListByScope(ctx, scopeID)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.MemoryRevision, len(rows))
	for i, r := range rows {
		out[i] = memoryRevisionFromGen(r)
	}
	return out, nil
}
