package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func sourceCursorFromRow(r postgresgen.PcSourceCursor) db.SourceCursor {
	return db.SourceCursor{
		ScopeID:    r.ScopeID,
		CursorName: r.CursorName,
		Position:   r.Position,
		Generation: r.Generation,
		UpdatedAt:  fromTime(r.UpdatedAt),
	}
}

func (s queries) SourceCursorGet(ctx context.Context, scopeID, cursorName string) (db.SourceCursor, error) {
	r, err := s.q.SourceCursorGet(ctx, postgresgen.SourceCursorGetParams{ScopeID: scopeID, CursorName: cursorName})
	if err != nil {
		return db.SourceCursor{}, interpretError(err)
	}
	return sourceCursorFromRow(r), nil
}

func (s queries) SourceCursorLock(ctx context.Context, scopeID, cursorName string) (db.SourceCursor, error) {
	r, err := s.q.SourceCursorLock(ctx, postgresgen.SourceCursorLockParams{ScopeID: scopeID, CursorName: cursorName})
	if err != nil {
		return db.SourceCursor{}, interpretError(err)
	}
	return sourceCursorFromRow(r), nil
}

func (s queries) SourceCursorInsert(ctx context.Context, c db.SourceCursor) error {
	return interpretError(s.q.SourceCursorInsert(ctx, postgresgen.SourceCursorInsertParams{
		ScopeID:    c.ScopeID,
		CursorName: c.CursorName,
		Position:   c.Position,
		Generation: c.Generation,
		UpdatedAt:  toTime(c.UpdatedAt),
	}))
}

func (s queries) SourceCursorAdvance(ctx context.Context, c db.SourceCursor, fromPosition, fromGeneration int64) (int64, error) {
	rows, err := s.q.SourceCursorAdvance(ctx, postgresgen.SourceCursorAdvanceParams{
		Position:       c.Position,
		Generation:     c.Generation,
		UpdatedAt:      toTime(c.UpdatedAt),
		ScopeID:        c.ScopeID,
		CursorName:     c.CursorName,
		FromPosition:   fromPosition,
		FromGeneration: fromGeneration,
	})
	return rows, interpretError(err)
}
