package db

import (
	"context"
)

// MemoryEntryQueries are the statements of pc_memory_entries (sql/queries/<engine>/memory_entry.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type MemoryEntryQueries interface {
	MemoryEntryDelete(ctx context.Context, p MemoryEntryDeleteParams) (int64, error)
	MemoryEntryDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)

	// MemoryEntryDeleteRevisionBatch deletes at most p.Limit entries of one revision. Returns rows deleted.
	MemoryEntryDeleteRevisionBatch(ctx context.Context, p MemoryEntryDeleteRevisionBatchParams) (int64, error)
	MemoryEntryInsert(ctx context.Context, e MemoryEntry) error

	// MemoryEntryInsertMany is MemoryEntryInsert of every entry, in order (a composite step: PostgreSQL sends them
	// in pipelined batches inside a transaction; docs/protocol.md#round-trips). The first failure is returned.
	MemoryEntryInsertMany(ctx context.Context, es []MemoryEntry) error
	MemoryEntryListByRevision(ctx context.Context, p MemoryEntryListByRevisionParams) ([]MemoryEntry, error)

	// The redaction's scrub of a forgotten Source from every revision: a keyset page of a scope's entries by
	// (revision, entry_no) after (p.AfterRevision, p.AfterEntryNo), one entry deleted or given new positions, and
	// a revision's entry_count lowered by the entries deleted from it. Writes return rows matched.
	MemoryEntryListByScopeAfter(ctx context.Context, p MemoryEntryListByScopeAfterParams) ([]MemoryEntry, error)
	MemoryEntryUpdatePositions(ctx context.Context, p MemoryEntryUpdatePositionsParams) (int64, error)
}
