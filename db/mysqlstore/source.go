package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func journalHeadFromGen(r mysqlgen.PcSourceJournalHead) db.SourceJournalHead {
	return db.SourceJournalHead{ScopeID: r.ScopeID, Position: r.Position, UpdatedAt: r.UpdatedAt.UTC()}
}

func sourceFromGen(r mysqlgen.PcSource) db.Source {
	return db.Source{
		ScopeID:         r.ScopeID,
		JournalPosition: r.JournalPosition,
		SourceID:        r.SourceID,
		SourceType:      r.SourceType,
		Content:         r.Content,
		Metadata:        r.Metadata,
		CreatedAt:       r.CreatedAt.UTC(),
	}
}

func sourcesFromGen(rows []mysqlgen.PcSource) []db.Source {
	out := make([]db.Source, len(rows))
	for i, r := range rows {
		out[i] = sourceFromGen(r)
	}
	return out
}

// SourceJournalHeadInsertIfAbsent creates an idle head (position 0). Run it autocommitted before the locking
// transaction (docs/protocol.md#creating-rows).
func (q *queries) SourceJournalHeadInsertIfAbsent(ctx context.Context, scopeID string) (bool, error) {
	n, err := q.q.SourceJournalHeadInsertIfAbsent(ctx, scopeID)
	if err != nil {
		return false, interpretError(err)
	}
	return n == 1, nil
}

func (q *queries) SourceJournalHeadLock(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	if _, err := q.q.SourceJournalHeadTouch(ctx, scopeID); err != nil {
		return db.SourceJournalHead{}, interpretError(err)
	}
	r, err := q.q.SourceJournalHeadLock(ctx, scopeID)
	if err != nil {
		return db.SourceJournalHead{}, interpretError(err)
	}
	return journalHeadFromGen(r), nil
}

// SourceJournalHeadUpdate returns db.ErrNotFound when the head does not exist.
func (q *queries) SourceJournalHeadUpdate(ctx context.Context, h db.SourceJournalHead) error {
	n, err := q.q.SourceJournalHeadUpdate(ctx, mysqlgen.SourceJournalHeadUpdateParams{
		Position:  h.Position,
		UpdatedAt: ts(h.UpdatedAt),
		ScopeID:   h.ScopeID,
	})
	return rowsFound(n, err)
}

func (q *queries) SourceJournalHeadGet(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	r, err := q.q.SourceJournalHeadGet(ctx, scopeID)
	if err != nil {
		return db.SourceJournalHead{}, interpretError(err)
	}
	return journalHeadFromGen(r), nil
}

func (q *queries) SourceJournalHeadListPending(ctx context.Context, cursorName, afterScopeID string, limit int32) ([]db.SourceJournalHead, error) {
	rows, err := q.q.SourceJournalHeadListPending(ctx, mysqlgen.SourceJournalHeadListPendingParams{
		CursorName:   cursorName,
		AfterScopeID: afterScopeID,
		Limit:        limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.SourceJournalHead, len(rows))
	for i, r := range rows {
		out[i] = journalHeadFromGen(r)
	}
	return out, nil
}

func (q *queries) SourceInsert(ctx context.Context, s db.Source) error {
	return interpretError(q.q.SourceInsert(ctx, mysqlgen.SourceInsertParams{
		ScopeID:         s.ScopeID,
		JournalPosition: s.JournalPosition,
		SourceID:        s.SourceID,
		SourceType:      s.SourceType,
		Content:         s.Content,
		Metadata:        s.Metadata,
		CreatedAt:       ts(s.CreatedAt),
	}))
}

func (q *queries) SourceGetByID(ctx context.Context, scopeID, sourceID string) (db.Source, error) {
	r, err := q.q.SourceGetByID(ctx, mysqlgen.SourceGetByIDParams{ScopeID: scopeID, SourceID: sourceID})
	if err != nil {
		return db.Source{}, interpretError(err)
	}
	return sourceFromGen(r), nil
}

func (q *queries) SourceListRange(ctx context.Context, scopeID string, after, through int64) ([]db.Source, error) {
	rows, err := q.q.SourceListRange(ctx, mysqlgen.SourceListRangeParams{
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
	rows, err := q.q.SourceListAfter(ctx, mysqlgen.SourceListAfterParams{
		ScopeID:       scopeID,
		AfterPosition: after,
		Limit:         limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return sourcesFromGen(rows), nil
}
