package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func sourceCursorFromGen(r mysqlgen.PcSourceCursor) db.SourceCursor {
	return db.SourceCursor{
		ScopeID:    r.ScopeID,
		CursorName: r.CursorName,
		Position:   r.Position,
		Generation: r.Generation,
		UpdatedAt:  r.UpdatedAt.UTC(),
	}
}

func (q *queries) SourceCursorGet(ctx context.Context, scopeID, cursorName string) (db.SourceCursor, error) {
	r, err := q.q.SourceCursorGet(ctx, mysqlgen.SourceCursorGetParams{ScopeID: scopeID, CursorName: cursorName})
	if err != nil {
		return db.SourceCursor{}, interpretError(err)
	}
	return sourceCursorFromGen(r), nil
}

func (q *queries) SourceCursorLock(ctx context.Context, scopeID, cursorName string) (db.SourceCursor, error) {
	if _, err := q.q.SourceCursorTouch(ctx, mysqlgen.SourceCursorTouchParams{ScopeID: scopeID, CursorName: cursorName}); err != nil {
		return db.SourceCursor{}, interpretError(err)
	}
	r, err := q.q.SourceCursorLock(ctx, mysqlgen.SourceCursorLockParams{ScopeID: scopeID, CursorName: cursorName})
	if err != nil {
		return db.SourceCursor{}, interpretError(err)
	}
	return sourceCursorFromGen(r), nil
}

func (q *queries) SourceCursorInsert(ctx context.Context, c db.SourceCursor) error {
	return interpretError(q.q.SourceCursorInsert(ctx, mysqlgen.SourceCursorInsertParams{
		ScopeID:    c.ScopeID,
		CursorName: c.CursorName,
		Position:   c.Position,
		Generation: c.Generation,
		UpdatedAt:  ts(c.UpdatedAt),
	}))
}

func (q *queries) SourceCursorAdvance(ctx context.Context, c db.SourceCursor, fromPosition, fromGeneration int64) (int64, error) {
	n, err := q.q.SourceCursorAdvance(ctx, mysqlgen.SourceCursorAdvanceParams{
		Position:       c.Position,
		Generation:     c.Generation,
		UpdatedAt:      ts(c.UpdatedAt),
		ScopeID:        c.ScopeID,
		CursorName:     c.CursorName,
		FromPosition:   fromPosition,
		FromGeneration: fromGeneration,
	})
	if err != nil {
		return 0, interpretError(err)
	}
	return n, nil
}
