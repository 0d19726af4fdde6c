package db

import (
	"context"
)

// WorkKeyQueries are the statements of pc_work_keys: the logical keys of unfinished items (sql/queries/<engine>/work_key.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type WorkKeyQueries interface {
	WorkKeyDelete(ctx context.Context, logicalKey string) (int64, error)
	WorkKeyInsertIfAbsent(ctx context.Context, key WorkKey) (bool, error)

	// WorkKeyInsertMany inserts the keys whose logical key does not exist yet (an existing key is neither written
	// nor locked; of two keys of the batch with one logical key the first is inserted) and returns the work ids of
	// the keys it inserted. The caller holds every key's lane lock.
	WorkKeyInsertMany(ctx context.Context, keys []WorkKey) ([]string, error)

	// WorkKeyItemInsert is WorkKeyInsertIfAbsent(p.Key) and, only when the key was inserted, WorkLaneUpdate(p.Lane)
	// and WorkItemInsert(p.Item) (an enqueue that creates its item; caller holds the lane lock). It reports whether
	// the key was inserted; when it was not, nothing was written.
	WorkKeyItemInsert(ctx context.Context, p WorkKeyItemInsertParams) (bool, error)

	// WorkKeyItemInsertAtCommit is WorkKeyItemInsert as the transaction's last statement: PostgreSQL (pipelined),
	// MariaDB and MySQL 8 (one multi-statement) send it in the COMMIT's round trip; SQLite and OceanBase run it at
	// once. *inserted is set once it ran: trust it only after InTx returned nil. The caller must run nothing after
	// it in the transaction (a second one is ErrAtCommitTwice on MariaDB and MySQL 8); when it did not insert, it
	// wrote nothing of the item (docs/protocol.md#enqueue).
	WorkKeyItemInsertAtCommit(ctx context.Context, p WorkKeyItemInsertParams, inserted *bool) error
	WorkKeyLock(ctx context.Context, logicalKey string) (WorkKey, error)
}
