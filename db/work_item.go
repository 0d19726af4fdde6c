package db

import (
	"context"
	"time"
)

// WorkItemQueries are the statements of pc_work_items: the ledger's items (sql/queries/<engine>/work_item.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type WorkItemQueries interface {
	// WorkItemClaimCandidates is the unlocked candidate query over lane heads: heads whose kind is in p.Kinds and
	// that are due (queued/retry_wait, available_at <= now), plus heads of any kind whose lease expired
	// (running/cancelling, lease_expires_at <= now); ordered by (available_at, created_at); at most p.Limit rows.
	WorkItemClaimCandidates(ctx context.Context, p WorkItemClaimCandidatesParams) ([]ClaimCandidate, error)

	// WorkItemClaimMany is one whole claim pass in one statement (autocommit or inside InTx): it locks up to
	// p.Slots due lane heads of a supported (kind, payload_version) with their lanes, oldest first, skipping rows
	// another transaction holds (never waiting), re-checks each under its locks, claims it exactly as a claim
	// does (running, owner, fence + 1, lease from the database clock, attempt counters, state_version + 1, an
	// attempt row with the given trace ids) and returns the claimed items, the clock they were checked against and
	// up to p.Candidates expired lane heads (unlocked, for recovery).
	WorkItemClaimMany(ctx context.Context, p WorkItemClaimManyParams) (WorkItemClaimManyResult, error)

	// WorkItemDeleteTerminal deletes the given items if they are still succeeded or cancelled. Returns rows deleted.
	WorkItemDeleteTerminal(ctx context.Context, workIDs []string) (int64, error)

	// WorkItemEnqueueMany writes the lanes' allocators and heads and inserts the items in one statement. Every item
	// must be as an enqueue creates it: queued, available, created and updated at now, no lease, no attempt, no
	// result, state_version 1 (an adapter refuses any other with an error). It returns the number of lanes updated
	// and of items inserted; anything but len(lanes) and len(items) means the caller must fail the transaction.
	WorkItemEnqueueMany(ctx context.Context, now time.Time, lanes []WorkLane, items []WorkItem) (int64, int64, error)

	// WorkItemExtendLease sets lease_expires_at for a running, uncancelled item whose owner, fence and attempt
	// count match (heartbeat; neither state_version nor updated_at change). Returns rows matched.
	WorkItemExtendLease(ctx context.Context, p WorkItemExtendLeaseParams) (int64, error)
	WorkItemGet(ctx context.Context, workID string) (WorkItem, error)

	// WorkItemHeadKindVersions counts due lane heads (queued/retry_wait, available_at <= now) by kind and version.
	WorkItemHeadKindVersions(ctx context.Context) ([]KindVersionCount, error)
	WorkItemInsert(ctx context.Context, item WorkItem) error

	// WorkItemList lists items newest first (created_at DESC, work_id DESC) with optional filters and keyset.
	WorkItemList(ctx context.Context, p WorkItemListParams) ([]WorkItem, error)

	// WorkItemListFinishedByScope lists up to p.Limit succeeded or cancelled items of a scope, except those of
	// p.ExceptKind.
	WorkItemListFinishedByScope(ctx context.Context, p WorkItemListFinishedByScopeParams) ([]string, error)

	// WorkItemLock returns the locked row and the database clock read in the same statement.
	WorkItemLock(ctx context.Context, workID string) (WorkItem, time.Time, error)

	// WorkItemPurgeCandidates returns ids of succeeded/cancelled items completed before p.CompletedBefore, oldest
	// first.
	WorkItemPurgeCandidates(ctx context.Context, p WorkItemPurgeCandidatesParams) ([]string, error)

	// WorkItemQueueStatistics groups non-terminal items (and failed ones) by kind and status.
	WorkItemQueueStatistics(ctx context.Context) ([]QueueStatistic, error)

	// WorkItemSucceedMany finishes the given items as succeeded in one statement: every mutable column as a
	// success writes it (state_version + 1, guarded by the expected version), the running attempt finished, the
	// logical key deleted and, where the item is its lane's head, the head advanced. The caller holds lane, key and
	// item locks. It returns the number of items updated; anything but len(p.Items) means the caller must fail the
	// transaction.
	WorkItemSucceedMany(ctx context.Context, p WorkItemSucceedManyParams) (int64, error)

	// WorkItemSucceedManyAtCommit is WorkItemSucceedMany as the transaction's last statement, all or nothing: every
	// item of p is finished when the transaction commits, or the commit fails and nothing of the transaction is kept
	// when one of them did not match (ErrAtCommitShort, or the engine's error). PostgreSQL sends it in the COMMIT's
	// pipelined batch with a guard statement after it, MariaDB and MySQL 8 in the COMMIT's multi-statement with a
	// guard after each statement; elsewhere it runs at once (ChainWorkItemSucceedManyAtCommit). Nothing may follow
	// it in the transaction, and it is never called inside a Savepoint, whose rollback could not take back a
	// statement queued for the COMMIT (docs/protocol.md#set-based-completion).
	WorkItemSucceedManyAtCommit(ctx context.Context, p WorkItemSucceedManyParams) error

	// WorkItemUpdateState writes every mutable column of p.Item — including p.Item.StateVersion as given (the
	// caller increments it) — where work_id matches and state_version equals p.ExpectedVersion; returns rows
	// matched.
	WorkItemUpdateState(ctx context.Context, p WorkItemUpdateStateParams) (int64, error)

	// WorkItemUpdateStateFinishAttempt is WorkItemUpdateState(p.State), WorkAttemptFinish(p.Attempt) and, when
	// p.AdvanceHead is set, WorkLaneAdvanceHead(*p.AdvanceHead) (caller holds lane, key and item locks). It returns
	// the rows the state update matched; when that is not 1 the caller must fail the transaction.
	WorkItemUpdateStateFinishAttempt(ctx context.Context, p WorkItemUpdateStateFinishAttemptParams) (int64, error)

	// WorkItemUpdateStateInsertAttempt is WorkItemUpdateState(p.State) then WorkAttemptInsert(p.Attempt) (a claim).
	// It returns the rows the state update matched; when that is not 1 the attempt may have been inserted too and
	// the caller must fail the transaction.
	WorkItemUpdateStateInsertAttempt(ctx context.Context, p WorkItemUpdateStateInsertAttemptParams) (int64, error)
}
