package db

import (
	"context"
)

// MemoryRevisionQueries are the statements of pc_memory_revisions (also the commit counter of the ledger's concurrency tests) (sql/queries/<engine>/memory.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type MemoryRevisionQueries interface {
	// MemoryRevisionDelete deletes one revision row. Returns rows deleted.
	MemoryRevisionDelete(ctx context.Context, p MemoryRevisionDeleteParams) (int64, error)
	MemoryRevisionDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)

	// MemoryRevisionGet returns one revision (ErrNotFound if it does not exist or was purged).
	MemoryRevisionGet(ctx context.Context, p MemoryRevisionGetParams) (MemoryRevision, error)

	// Memory revisions (domain; also the commit counter of the ledger's concurrency tests).
	MemoryRevisionInsert(ctx context.Context, r MemoryRevision) error
	MemoryRevisionLatest(ctx context.Context, scopeID string) (MemoryRevision, error)

	// MemoryRevisionLatestWithEntryIDs returns the newest revision of a scope that records entry ids (its
	// EvictedEntryIDs is not NULL); ErrNotFound if none does: no revision, or only revisions an older build wrote.
	MemoryRevisionLatestWithEntryIDs(ctx context.Context, scopeID string) (MemoryRevision, error)

	// MemoryRevisionList returns up to p.Limit revisions of a scope below p.BeforeRevision, newest first.
	MemoryRevisionList(ctx context.Context, p MemoryRevisionListParams) ([]MemoryRevision, error)

	// MemoryRevisionListExpired lists up to p.Limit revisions older than the newest p.Keep of their scope, by
	// scope and revision.
	MemoryRevisionListExpired(ctx context.Context, p MemoryRevisionListExpiredParams) ([]MemoryRevisionRef, error)
	MemoryRevisionSubtractEntries(ctx context.Context, p MemoryRevisionSubtractEntriesParams) (int64, error)
}
