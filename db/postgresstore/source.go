package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func journalHeadFromRow(r postgresgen.PcSourceJournalHead) db.SourceJournalHead {
	return db.SourceJournalHead{ScopeID: r.ScopeID, Position: r.Position, UpdatedAt: fromTime(r.UpdatedAt)}
}

func sourceFromRow(r postgresgen.PcSource) db.Source {
	return db.Source{
		ScopeID:         r.ScopeID,
		JournalPosition: r.JournalPosition,
		SourceID:        r.SourceID,
		SourceType:      r.SourceType,
		Content:         r.Content,
		Metadata:        r.Metadata,
		CreatedAt:       fromTime(r.CreatedAt),
	}
}

func sourcesFromRows(rs []postgresgen.PcSource) []db.Source {
	out := make([]db.Source, 0, len(rs))
	for _, r := range rs {
		out = append(out, sourceFromRow(r))
	}
	return out
}

func (s queries) SourceJournalHeadInsertIfAbsent(ctx context.Context, scopeID string) (bool, error) {
	rows, err := s.q.SourceJournalHeadInsertIfAbsent(ctx, scopeID)
	if err != nil {
		return false, interpretError(err)
	}
	return rows == 1, nil
}

func (s queries) SourceJournalHeadLock(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	r, err := s.q.SourceJournalHeadLock(ctx, scopeID)
	if err != nil {
		return db.SourceJournalHead{}, interpretError(err)
	}
	return journalHeadFromRow(r), nil
}

// SourceJournalHeadUpdate returns db.ErrNotFound when the head does not exist.
func (s queries) SourceJournalHeadUpdate(ctx context.Context, h db.SourceJournalHead) error {
	return rowsOrNotFound(s.q.SourceJournalHeadUpdate(ctx, postgresgen.SourceJournalHeadUpdateParams{
		Position:  h.Position,
		UpdatedAt: toTime(h.UpdatedAt),
		ScopeID:   h.ScopeID,
	}))
}

func (s queries) SourceJournalHeadGet(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	r, err := s.q.SourceJournalHeadGet(ctx, scopeID)
	if err != nil {
		return db.SourceJournalHead{}, interpretError(err)
	}
	return journalHeadFromRow(r), nil
}

func (s queries) SourceJournalHeadListPending(ctx context.Context, cursorName, afterScopeID string, limit int32) ([]db.SourceJournalHead, error) {
	rs, err := s.q.SourceJournalHeadListPending(ctx, postgresgen.SourceJournalHeadListPendingParams{
		CursorName:   cursorName,
		AfterScopeID: afterScopeID,
		MaxRows:      limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.SourceJournalHead, 0, len(rs))
	for _, r := range rs {
		out = append(out, journalHeadFromRow(r))
	}
	return out, nil
}

func (s queries) SourceInsert(ctx context.Context, src db.Source) error {
	return interpretError(s.q.SourceInsert(ctx, postgresgen.SourceInsertParams{
		ScopeID:         src.ScopeID,
		JournalPosition: src.JournalPosition,
		SourceID:        src.SourceID,
		SourceType:      src.SourceType,
		Content:         src.Content,
		Metadata:        src.Metadata,
		CreatedAt:       toTime(src.CreatedAt),
	}))
}

func (s queries) SourceGetByID(ctx context.Context, scopeID, sourceID string) (db.Source, error) {
	r, err := s.q.SourceGetByID(ctx, postgresgen.SourceGetByIDParams{ScopeID: scopeID, SourceID: sourceID})
	if err != nil {
		return db.Source{}, interpretError(err)
	}
	return sourceFromRow(r), nil
}

func (s queries) SourceListRange(ctx context.Context, scopeID string, after, through int64) ([]db.Source, error) {
	rs, err := s.q.SourceListRange(ctx, postgresgen.SourceListRangeParams{
		ScopeID:         scopeID,
		AfterPosition:   after,
		ThroughPosition: through,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return sourcesFromRows(rs), nil
}

func (s queries) SourceListAfter(ctx context.Context, scopeID string, after int64, limit int32) ([]db.Source, error) {
	rs, err := s.q.SourceListAfter(ctx, postgresgen.SourceListAfterParams{
		ScopeID:       scopeID,
		AfterPosition: after,
		MaxRows:       limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return sourcesFromRows(rs), nil
}
