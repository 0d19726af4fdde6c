package db

import (
	"context"
	"time"
)

// LifecycleQueries are the statements of the data lifecycle (docs/protocol.md#forgetting-and-erasing): forgetting
// a Source, erasing a scope, retention.
type LifecycleQueries interface {
	// SourceErase forgets one Source: content '' and metadata {} with erased_at set on the database clock, once
	// (an erased Source matches no row). Returns rows matched.
	SourceErase(ctx context.Context, p SourceEraseParams) (int64, error)
	// SourceEraseByPositions forgets the given Sources of one scope (retention), those not erased yet. Returns
	// rows matched.
	SourceEraseByPositions(ctx context.Context, p SourceEraseByPositionsParams) (int64, error)
	// SourceListErasable lists up to p.Limit Sources not erased, created before p.CreatedBefore and consumed by
	// every cursor of their scope, oldest first (retention candidates).
	SourceListErasable(ctx context.Context, p SourceListErasableParams) ([]SourcePosition, error)
}

// SourceEraseByPositionsParams addresses Sources of one scope.
type SourceEraseByPositionsParams struct {
	ScopeID   string
	Positions []int64
}

// SourceListErasableParams bounds SourceListErasable.
type SourceListErasableParams struct {
	CreatedBefore time.Time
	Limit         int32
}

// SourcePosition names one Source by its journal position.
type SourcePosition struct {
	ScopeID         string
	JournalPosition int64
}

// SourceEraseParams forgets one Source.
type SourceEraseParams struct {
	ScopeID  string
	SourceID string
}
