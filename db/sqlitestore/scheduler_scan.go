package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func (q *queries) SchedulerScanInsertIfAbsent(ctx context.Context, scan db.SchedulerScan) (bool, error) {
	return inserted(q.w.SchedulerScanInsertIfAbsent(ctx, sqlitegen.SchedulerScanInsertIfAbsentParams{
		Discoverer:   scan.Discoverer,
		NextRunAt:    toMicros(scan.NextRunAt),
		Continuation: toNullString(scan.Continuation),
		StateVersion: scan.StateVersion,
		UpdatedAt:    toMicros(scan.UpdatedAt),
	}))
}

func (q *queries) SchedulerScanGet(ctx context.Context, discoverer string) (db.SchedulerScan, error) {
	r, err := q.r.SchedulerScanGet(ctx, discoverer)
	if err != nil {
		return db.SchedulerScan{}, interpretError(err)
	}
	return db.SchedulerScan{
		Discoverer:   r.Discoverer,
		NextRunAt:    fromMicros(r.NextRunAt),
		Continuation: fromNullString(r.Continuation),
		StateVersion: r.StateVersion,
		UpdatedAt:    fromMicros(r.UpdatedAt),
	}, nil
}

// SchedulerScanUpdate ignores scan.StateVersion: the new version is expectedVersion+1.
func (q *queries) SchedulerScanUpdate(ctx context.Context, scan db.SchedulerScan, expectedVersion int64) (int64, error) {
	return affected(q.w.SchedulerScanUpdate(ctx, sqlitegen.SchedulerScanUpdateParams{
		NextRunAt:       toMicros(scan.NextRunAt),
		Continuation:    toNullString(scan.Continuation),
		ExpectedVersion: expectedVersion,
		UpdatedAt:       toMicros(scan.UpdatedAt),
		Discoverer:      scan.Discoverer,
	}))
}
