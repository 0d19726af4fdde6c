package db

import (
	"context"
)

// SourceCursorQueries are the statements of pc_source_cursors: domain cursors (the last lock in the global order) (sql/queries/<engine>/source_cursor.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type SourceCursorQueries interface {
	// SourceCursorAdvance compare-and-sets (position, generation) from (p.FromPosition, p.FromGeneration) to
	// (p.Cursor.Position, p.Cursor.Generation). Returns rows changed.
	SourceCursorAdvance(ctx context.Context, p SourceCursorAdvanceParams) (int64, error)
	SourceCursorDeleteByScope(ctx context.Context, scopeID string) (int64, error)

	// Source cursors (domain cursor: the last lock in the global order).
	SourceCursorGet(ctx context.Context, p SourceCursorGetParams) (SourceCursor, error)
	SourceCursorInsert(ctx context.Context, c SourceCursor) error
	SourceCursorLock(ctx context.Context, p SourceCursorLockParams) (SourceCursor, error)
}
