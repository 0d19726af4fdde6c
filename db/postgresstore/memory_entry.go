package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func memoryEntryFromRow(r postgresgen.PcMemoryEntry) db.MemoryEntry {
	return db.MemoryEntry{
		ScopeID:         r.ScopeID,
		Revision:        r.Revision,
		EntryNo:         r.EntryNo,
		Content:         r.Content,
		SourcePositions: r.SourcePositions,
		CreatedAt:       fromTime(r.CreatedAt),
	}
}

func memoryEntriesFromRows(rs []postgresgen.PcMemoryEntry) []db.MemoryEntry {
	out := make([]db.MemoryEntry, 0, len(rs))
	for _, r := range rs {
		out = append(out, memoryEntryFromRow(r))
	}
	return out
}

func (s queries) MemoryEntryInsert(ctx context.Context, e db.MemoryEntry) error {
	return interpretError(s.q.MemoryEntryInsert(ctx, postgresgen.MemoryEntryInsertParams{
		ScopeID:         e.ScopeID,
		Revision:        e.Revision,
		EntryNo:         e.EntryNo,
		Content:         e.Content,
		SourcePositions: e.SourcePositions,
		CreatedAt:       toTime(e.CreatedAt),
	}))
}

func (s queries) MemoryEntryListByRevision(ctx context.Context, scopeID string, revision int64) ([]db.MemoryEntry, error) {
	rs, err := s.q.MemoryEntryListByRevision(ctx, postgresgen.MemoryEntryListByRevisionParams{
		ScopeID:  scopeID,
		Revision: revision,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return memoryEntriesFromRows(rs), nil
}

// MemoryEntrySearch matches query case-insensitively (ILIKE) as a literal substring: % _ and \ are escaped.
func (s queries) MemoryEntrySearch(ctx context.Context, scopeID string, revision int64, query string, limit int32) ([]db.MemoryEntry, error) {
	rs, err := s.q.MemoryEntrySearch(ctx, postgresgen.MemoryEntrySearchParams{
		ScopeID:  scopeID,
		Revision: revision,
		Pattern:  db.LikeContains(query),
		MaxRows:  limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return memoryEntriesFromRows(rs), nil
}
