package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func revisionFromGen(r sqlitegen.PcMemoryRevision) db.MemoryRevision {
	return db.MemoryRevision{
		ScopeID:          r.ScopeID,
		Revision:         r.Revision,
		WorkID:           r.WorkID,
		CursorGeneration: r.CursorGeneration,
		WindowAfter:      r.WindowAfter,
		WindowThrough:    r.WindowThrough,
		EntryCount:       int32(r.EntryCount),
		CreatedAt:        fromMicros(r.CreatedAt),
	}
}

func (q *queries) MemoryRevisionInsert(ctx context.Context, r db.MemoryRevision) error {
	return interpretError(q.w.MemoryRevisionInsert(ctx, sqlitegen.MemoryRevisionInsertParams{
		ScopeID:          r.ScopeID,
		Revision:         r.Revision,
		WorkID:           r.WorkID,
		CursorGeneration: r.CursorGeneration,
		WindowAfter:      r.WindowAfter,
		WindowThrough:    r.WindowThrough,
		EntryCount:       int64(r.EntryCount),
		CreatedAt:        toMicros(r.CreatedAt),
	}))
}

func (q *queries) MemoryRevisionLatest(ctx context.Context, scopeID string) (db.MemoryRevision, error) {
	r, err := q.r.MemoryRevisionLatest(ctx, scopeID)
	if err != nil {
		return db.MemoryRevision{}, interpretError(err)
	}
	return revisionFromGen(r), nil
}

func (q *queries) MemoryRevisionListByScope(ctx context.Context, scopeID string) ([]db.MemoryRevision, error) {
	rows, err := q.r.MemoryRevisionListByScope(ctx, scopeID)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.MemoryRevision, 0, len(rows))
	for _, r := range rows {
		out = append(out, revisionFromGen(r))
	}
	return out, nil
}
