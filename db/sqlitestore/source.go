package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func journalHeadFromGen(r sqlitegen.PcSourceJournalHead) db.SourceJournalHead {
	return db.SourceJournalHead{ScopeID: r.ScopeID, Position: r.Position, UpdatedAt: fromMicros(r.UpdatedAt)}
}

func sourceFromGen(r sqlitegen.PcSource) db.Source {
	return db.Source{
		ScopeID:         r.ScopeID,
		JournalPosition: r.JournalPosition,
		SourceID:        r.SourceID,
		SourceType:      r.SourceType,
		Content:         r.Content,
		Metadata:        r.Metadata,
		CreatedAt:       fromMicros(r.CreatedAt),
	}
}

func sourcesFromGen(rows []sqlitegen.PcSource) []db.Source {
	out := make([]db.Source, 0, len(rows))
	for _, r := range rows {
		out = append(out, sourceFromGen(r))
	}
	return out
}

func (q *queries) SourceJournalHeadInsertIfAbsent(ctx context.Context, scopeID string) (bool, error) {
	return inserted(q.w.SourceJournalHeadInsertIfAbsent(ctx, scopeID))
}

// SourceJournalHeadLock is a plain read: the BEGIN IMMEDIATE transaction already holds the database write lock.
func (q *queries) SourceJournalHeadLock(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	r, err := q.w.SourceJournalHeadLock(ctx, scopeID)
	if err != nil {
		return db.SourceJournalHead{}, interpretError(err)
	}
	return journalHeadFromGen(r), nil
}

// SourceJournalHeadUpdate returns db.ErrNotFound when the head does not exist.
func (q *queries) SourceJournalHeadUpdate(ctx context.Context, h db.SourceJournalHead) error {
	return rowsOrNotFound(q.w.SourceJournalHeadUpdate(ctx, sqlitegen.SourceJournalHeadUpdateParams{
		Position:  h.Position,
		UpdatedAt: toMicros(h.UpdatedAt),
		ScopeID:   h.ScopeID,
	}))
}

func (q *queries) SourceJournalHeadGet(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	r, err := q.r.SourceJournalHeadGet(ctx, scopeID)
	if err != nil {
		return db.SourceJournalHead{}, interpretError(err)
	}
	return journalHeadFromGen(r), nil
}

func (q *queries) SourceJournalHeadListPending(ctx context.Context, cursorName, afterScopeID string, limit int32) ([]db.SourceJournalHead, error) {
	rows, err := q.r.SourceJournalHeadListPending(ctx, sqlitegen.SourceJournalHeadListPendingParams{
		CursorName:   cursorName,
		AfterScopeID: afterScopeID,
		MaxRows:      int64(limit),
	})
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.SourceJournalHead, 0, len(rows))
	for _, r := range rows {
		out = append(out, journalHeadFromGen(r))
	}
	return out, nil
}

func (q *queries) SourceInsert(ctx context.Context, s db.Source) error {
	return interpretError(q.w.SourceInsert(ctx, sqlitegen.SourceInsertParams{
		ScopeID:         s.ScopeID,
		JournalPosition: s.JournalPosition,
		SourceID:        s.SourceID,
		SourceType:      s.SourceType,
		Content:         s.Content,
		Metadata:        s.Metadata,
		CreatedAt:       toMicros(s.CreatedAt),
	}))
}

func (q *queries) SourceGetByID(ctx context.Context, scopeID, sourceID string) (db.Source, error) {
	r, err := q.r.SourceGetByID(ctx, sqlitegen.SourceGetByIDParams{ScopeID: scopeID, SourceID: sourceID})
	if err != nil {
		return db.Source{}, interpretError(err)
	}
	return sourceFromGen(r), nil
}

func (q *queries) SourceListRange(ctx context.Context, scopeID string, after, through int64) ([]db.Source, error) {
	rows, err := q.r.SourceListRange(ctx, sqlitegen.SourceListRangeParams{
		ScopeID:         scopeID,
		AfterPosition:   after,
		ThroughPosition: through,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return sourcesFromGen(rows), nil
}

func (q *queries) SourceListAfter(ctx context.Context, scopeID string, after int64, limit int32) ([]db.Source, error) {
	rows, err := q.r.SourceListAfter(ctx, sqlitegen.SourceListAfterParams{
		ScopeID:       scopeID,
		AfterPosition: after,
		MaxRows:       int64(limit),
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return sourcesFromGen(rows), nil
}
