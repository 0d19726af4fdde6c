package db

import (
	"context"
)

// WorkAttemptQueries are the statements of pc_work_attempts: the append-only audit of attempts (sql/queries/<engine>/work_attempt.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type WorkAttemptQueries interface {
	// WorkAttemptCountSnoozed counts the attempts of one item and recovery generation that ended snoozed. The
	// caller holds the item lock.
	WorkAttemptCountSnoozed(ctx context.Context, p WorkAttemptCountSnoozedParams) (int64, error)
	WorkAttemptDeleteByWorkIDs(ctx context.Context, workIDs []string) (int64, error)

	// WorkAttemptFinish sets finished_at, outcome and error of an unfinished attempt. Returns rows changed.
	WorkAttemptFinish(ctx context.Context, p WorkAttemptFinishParams) (int64, error)
	WorkAttemptGet(ctx context.Context, p WorkAttemptGetParams) (WorkAttempt, error)

	// WorkAttemptHeartbeat sets heartbeat_at of an unfinished attempt. Returns rows changed.
	WorkAttemptHeartbeat(ctx context.Context, p WorkAttemptHeartbeatParams) (int64, error)
	WorkAttemptInsert(ctx context.Context, a WorkAttempt) error
	WorkAttemptListByWorkID(ctx context.Context, workID string) ([]WorkAttempt, error)
}
