package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func memoryRevisionFromRow(r postgresgen.PcMemoryRevision) db.MemoryRevision {
	return db.MemoryRevision{
		ScopeID:          r.ScopeID,
		Revision:         r.Revision,
		WorkID:           r.WorkID,
		CursorGeneration: r.CursorGeneration,
		WindowAfter:      r.WindowAfter,
		WindowThrough:    r.WindowThrough,
		EntryCount:       r.EntryCount,
		CreatedAt:        fromTime(r.CreatedAt),
	}
}

func (s queries) MemoryRevisionInsert(ctx context.Context, r db.MemoryRevision) error {
	return interpretError(s.q.MemoryRevisionInsert(ctx, postgresgen.MemoryRevisionInsertParams{
		ScopeID:          r.ScopeID,
		Revision:         r.Revision,
		WorkID:           r.WorkID,
		CursorGeneration: r.CursorGeneration,
		WindowAfter:      r.WindowAfter,
		WindowThrough:    r.WindowThrough,
		EntryCount:       r.EntryCount,
		CreatedAt:        toTime(r.CreatedAt),
	}))
}

func (s queries) MemoryRevisionLatest(ctx context.Context, scopeID string) (db.MemoryRevision, error) {
	r, err := s.q.MemoryRevisionLatest(ctx, scopeID)
	if err != nil {
		return db.MemoryRevision{}, interpretError(err)
	}
	return memoryRevisionFromRow(r), nil
}

func (s queries) MemoryRevisionListByScope(ctx context.Context, scopeID string) ([]db.MemoryRevision, error) {
	rs, err := s.q.MemoryRevisionListByScope(ctx, scopeID)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.MemoryRevision, 0, len(rs))
	for _, r := range rs {
		out = append(out, memoryRevisionFromRow(r))
	}
	return out, nil
}
