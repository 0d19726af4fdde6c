package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func (q *queries) SchedulerScanInsertIfAbsent(ctx context.Context, scan db.SchedulerScan) (bool, error) {
	n, err := q.q.SchedulerScanInsertIfAbsent(ctx, mysqlgen.SchedulerScanInsertIfAbsentParams{
		Discoverer:   scan.Discoverer,
		NextRunAt:    ts(scan.NextRunAt),
		Continuation: nullString(scan.Continuation),
		StateVersion: scan.StateVersion,
		UpdatedAt:    ts(scan.UpdatedAt),
	})
	if err != nil {
		return false, interpretError(err)
	}
	return n == 1, nil
}

func (q *queries) SchedulerScanGet(ctx context.Context, discoverer string) (db.SchedulerScan, error) {
	r, err := q.q.SchedulerScanGet(ctx, discoverer)
	if err != nil {
		return db.SchedulerScan{}, interpretError(err)
	}
	return db.SchedulerScan{
		Discoverer:   r.Discoverer,
		NextRunAt:    r.NextRunAt.UTC(),
		Continuation: fromNullString(r.Continuation),
		StateVersion: r.StateVersion,
		UpdatedAt:    r.UpdatedAt.UTC(),
	}, nil
}

func (q *queries) SchedulerScanUpdate(ctx context.Context, scan db.SchedulerScan, expectedVersion int64) (int64, error) {
	n, err := q.q.SchedulerScanUpdate(ctx, mysqlgen.SchedulerScanUpdateParams{
		NextRunAt:       ts(scan.NextRunAt),
		Continuation:    nullString(scan.Continuation),
		UpdatedAt:       ts(scan.UpdatedAt),
		Discoverer:      scan.Discoverer,
		ExpectedVersion: expectedVersion,
	})
	return n, interpretError(err)
}
