package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func memoryEntryFromGen(r mysqlgen.PcMemoryEntry) db.MemoryEntry {
	return db.MemoryEntry{
		ScopeID:         r.ScopeID,
		Revision:        r.Revision,
		EntryNo:         r.EntryNo,
		Content:         r.Content,
		SourcePositions: r.SourcePositions,
		CreatedAt:       r.CreatedAt.UTC(),
	}
}

func memoryEntriesFromGen(rows []mysqlgen.PcMemoryEntry) []db.MemoryEntry {
	out := make([]db.MemoryEntry, len(rows))
	for i, r := range rows {
		out[i] = memoryEntryFromGen(r)
	}
	return out
}

func (q *queries) MemoryEntryInsert(ctx context.Context, e db.MemoryEntry) error {
	return interpretError(q.q.MemoryEntryInsert(ctx, mysqlgen.MemoryEntryInsertParams{
		ScopeID:         e.ScopeID,
		Revision:        e.Revision,
		EntryNo:         e.EntryNo,
		Content:         e.Content,
		SourcePositions: e.SourcePositions,
		CreatedAt:       ts(e.CreatedAt),
	}))
}

func (q *queries) MemoryEntryListByRevision(ctx context.Context, scopeID string, revision int64) ([]db.MemoryEntry, error) {
	rows, err := q.q.MemoryEntryListByRevision(ctx, mysqlgen.MemoryEntryListByRevisionParams{
		ScopeID:  scopeID,
		Revision: revision,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return memoryEntriesFromGen(rows), nil
}

// MemoryEntrySearch matches query as a literal substring (% _ and \ escaped), case-insensitively: content is
// utf8mb4_bin, so both sides are lower-cased.
func (q *queries) MemoryEntrySearch(ctx context.Context, scopeID string, revision int64, query string, limit int32) ([]db.MemoryEntry, error) {
	rows, err := q.q.MemoryEntrySearch(ctx, mysqlgen.MemoryEntrySearchParams{
		ScopeID:  scopeID,
		Revision: revision,
		Pattern:  db.LikeContains(query),
		Limit:    limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return memoryEntriesFromGen(rows), nil
}
