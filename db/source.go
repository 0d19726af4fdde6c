package db

import (
	"context"
)

// SourceJournalHeadQueries are the statements of pc_source_journal_heads: the per-scope journal high-watermark (sql/queries/<engine>/source.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type SourceJournalHeadQueries interface {
	// SourceJournalHeadDelete deletes a scope's journal head (the caller holds its lock).
	SourceJournalHeadDelete(ctx context.Context, scopeID string) (int64, error)
	SourceJournalHeadGet(ctx context.Context, scopeID string) (SourceJournalHead, error)
	SourceJournalHeadInsertIfAbsent(ctx context.Context, scopeID string) (bool, error)

	// SourceJournalHeadListPending is the discoverers' keyset over scopes: heads with scope_id > p.AfterScopeID
	// whose position is beyond the cursor p.CursorName (a missing cursor counts as 0), by scope_id.
	SourceJournalHeadListPending(ctx context.Context, p SourceJournalHeadListPendingParams) ([]SourceJournalHead, error)
	SourceJournalHeadLock(ctx context.Context, scopeID string) (SourceJournalHead, error)
	SourceJournalHeadUpdate(ctx context.Context, h SourceJournalHead) error
}

// SourceQueries are the statements of pc_sources: the journal of captured Sources (sql/queries/<engine>/source.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type SourceQueries interface {
	// SourceCountErased counts the scope's tombstones with journal_position <= p.ThroughPosition.
	SourceCountErased(ctx context.Context, p SourceCountErasedParams) (int64, error)
	SourceDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)

	// SourceErase forgets one Source: content '' and metadata {} with erased_at set on the database clock, once
	// (an erased Source matches no row). Returns rows matched.
	SourceErase(ctx context.Context, p SourceEraseParams) (int64, error)

	// SourceEraseByPositions forgets the given Sources of one scope (retention), those not erased yet. Returns
	// rows matched.
	SourceEraseByPositions(ctx context.Context, p SourceEraseByPositionsParams) (int64, error)
	SourceGetByID(ctx context.Context, p SourceGetByIDParams) (Source, error)
	SourceInsert(ctx context.Context, s Source) error

	// SourceInsertMany inserts Sources of one scope in one statement over the set (an import, docs/portability.md);
	// a Source with ErasedAt is written as its tombstone (content '', metadata {}, that erased_at; its Content and
	// Metadata are not written). The caller holds the scope's journal head lock and bounds the batch (an import
	// writes batches of at most 1,000 Sources and about 2 MiB).
	SourceInsertMany(ctx context.Context, ss []Source) error

	// SourceListAfter returns up to p.Limit Sources with journal_position > p.AfterPosition, in journal order.
	SourceListAfter(ctx context.Context, p SourceListAfterParams) ([]Source, error)

	// SourceListErasable lists up to p.Limit Sources not erased, created before p.CreatedBefore and consumed by
	// every cursor of their scope, oldest first (retention candidates).
	SourceListErasable(ctx context.Context, p SourceListErasableParams) ([]SourcePosition, error)

	// SourceListRange returns the Sources with AfterPosition < journal_position <= ThroughPosition, in journal
	// order.
	SourceListRange(ctx context.Context, p SourceListRangeParams) ([]Source, error)
}
