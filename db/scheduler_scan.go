package db

import (
	"context"
)

// SchedulerScanQueries are the statements of pc_scheduler_scans: discoverer scan positions (sql/queries/<engine>/scheduler_scan.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type SchedulerScanQueries interface {
	SchedulerScanGet(ctx context.Context, discoverer string) (SchedulerScan, error)
	SchedulerScanInsertIfAbsent(ctx context.Context, scan SchedulerScan) (bool, error)

	// SchedulerScanUpdate writes next_run_at, continuation, state_version = expected+1 and updated_at where the
	// version equals p.ExpectedVersion. Returns rows changed.
	SchedulerScanUpdate(ctx context.Context, p SchedulerScanUpdateParams) (int64, error)
}
