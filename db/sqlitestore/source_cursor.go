package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func sourceCursorFromGen(r sqlitegen.PcSourceCursor) db.SourceCursor {
	return db.SourceCursor{
		ScopeID:    r.ScopeID,
		CursorName: r.CursorName,
		Position:   r.Position,
		Generation: r.Generation,
		UpdatedAt:  fromMicros(r.UpdatedAt),
	}
}

func (q *queries) SourceCursorGet(ctx context.Context, scopeID, cursorName string) (db.SourceCursor, error) {
	r, err := q.r.SourceCursorGet(ctx, sqlitegen.SourceCursorGetParams{ScopeID: scopeID, CursorName: cursorName})
	if err != nil {
		return db.SourceCursor{}, interpretError(err)
	}
	return sourceCursorFromGen(r), nil
}

// SourceCursorLock is a plain read: the BEGIN IMMEDIATE transaction already holds the database write lock.
func (q *queries) SourceCursorLock(ctx context.Context, scopeID, cursorName string) (db.SourceCursor, error) {
	r, err := q.w.SourceCursorLock(ctx, sqlitegen.SourceCursorLockParams{ScopeID: scopeID, CursorName: cursorName})
	if err != nil {
		return db.SourceCursor{}, interpretError(err)
	}
	return sourceCursorFromGen(r), nil
}

func (q *queries) SourceCursorInsert(ctx context.Context, c db.SourceCursor) error {
	return interpretError(q.w.SourceCursorInsert(ctx, sqlitegen.SourceCursorInsertParams{
		ScopeID:    c.ScopeID,
		CursorName: c.CursorName,
		Position:   c.Position,
		Generation: c.Generation,
		UpdatedAt:  toMicros(c.UpdatedAt),
	}))
}

func (q *queries) SourceCursorAdvance(ctx context.Context, c db.SourceCursor, fromPosition, fromGeneration int64) (int64, error) {
	return affected(q.w.SourceCursorAdvance(ctx, sqlitegen.SourceCursorAdvanceParams{
		Position:       c.Position,
		Generation:     c.Generation,
		UpdatedAt:      toMicros(c.UpdatedAt),
		ScopeID:        c.ScopeID,
		CursorName:     c.CursorName,
		FromPosition:   fromPosition,
		FromGeneration: fromGeneration,
	}))
}
