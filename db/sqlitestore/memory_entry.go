package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func memoryEntryFromGen(r sqlitegen.PcMemoryEntry) db.MemoryEntry {
	return db.MemoryEntry{
		ScopeID:         r.ScopeID,
		Revision:        r.Revision,
		EntryNo:         int32(r.EntryNo),
		Content:         r.Content,
		SourcePositions: r.SourcePositions,
		CreatedAt:       fromMicros(r.CreatedAt),
	}
}

func memoryEntriesFromGen(rows []sqlitegen.PcMemoryEntry) []db.MemoryEntry {
	out := make([]db.MemoryEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, memoryEntryFromGen(r))
	}
	return out
}

func (q *queries) MemoryEntryInsert(ctx context.Context, e db.MemoryEntry) error {
	return interpretError(q.w.MemoryEntryInsert(ctx, sqlitegen.MemoryEntryInsertParams{
		ScopeID:         e.ScopeID,
		Revision:        e.Revision,
		EntryNo:         int64(e.EntryNo),
		Content:         e.Content,
		SourcePositions: e.SourcePositions,
		CreatedAt:       toMicros(e.CreatedAt),
	}))
}

func (q *queries) MemoryEntryListByRevision(ctx context.Context, scopeID string, revision int64) ([]db.MemoryEntry, error) {
	rows, err := q.r.MemoryEntryListByRevision(ctx, sqlitegen.MemoryEntryListByRevisionParams{
		ScopeID:  scopeID,
		Revision: revision,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return memoryEntriesFromGen(rows), nil
}

// MemoryEntrySearch matches query as a literal substring (% _ and \ escaped). SQLite's LIKE folds case for ASCII
// letters only: non-ASCII letters match case-sensitively.
func (q *queries) MemoryEntrySearch(ctx context.Context, scopeID string, revision int64, query string, limit int32) ([]db.MemoryEntry, error) {
	rows, err := q.r.MemoryEntrySearch(ctx, sqlitegen.MemoryEntrySearchParams{
		ScopeID:  scopeID,
		Revision: revision,
		Pattern:  db.LikeContains(query),
		MaxRows:  int64(limit),
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return memoryEntriesFromGen(rows), nil
}
