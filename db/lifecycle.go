package db

import "context"

// LifecycleQueries are the statements of the data lifecycle (docs/protocol.md#forgetting-and-erasing): forgetting
// a Source, erasing a scope, retention.
type LifecycleQueries interface {
	// SourceErase forgets one Source: content '' and metadata {} with erased_at set on the database clock, once
	// (an erased Source matches no row). Returns rows matched.
	SourceErase(ctx context.Context, p SourceEraseParams) (int64, error)
}

// SourceEraseParams forgets one Source.
type SourceEraseParams struct {
	ScopeID  string
	SourceID string
}
