package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func (s queries) SchedulerScanInsertIfAbsent(ctx context.Context, scan db.SchedulerScan) (bool, error) {
	rows, err := s.q.SchedulerScanInsertIfAbsent(ctx, postgresgen.SchedulerScanInsertIfAbsentParams{
		Discoverer:   scan.Discoverer,
		NextRunAt:    toTime(scan.NextRunAt),
		Continuation: toTextPtr(scan.Continuation),
		StateVersion: scan.StateVersion,
		UpdatedAt:    toTime(scan.UpdatedAt),
	})
	if err != nil {
		return false, interpretError(err)
	}
	return rows == 1, nil
}

func (s queries) SchedulerScanGet(ctx context.Context, discoverer string) (db.SchedulerScan, error) {
	r, err := s.q.SchedulerScanGet(ctx, discoverer)
	if err != nil {
		return db.SchedulerScan{}, interpretError(err)
	}
	return db.SchedulerScan{
		Discoverer:   r.Discoverer,
		NextRunAt:    fromTime(r.NextRunAt),
		Continuation: fromTextPtr(r.Continuation),
		StateVersion: r.StateVersion,
		UpdatedAt:    fromTime(r.UpdatedAt),
	}, nil
}

func (s queries) SchedulerScanUpdate(ctx context.Context, scan db.SchedulerScan, expectedVersion int64) (int64, error) {
	rows, err := s.q.SchedulerScanUpdate(ctx, postgresgen.SchedulerScanUpdateParams{
		NextRunAt:       toTime(scan.NextRunAt),
		Continuation:    toTextPtr(scan.Continuation),
		ExpectedVersion: expectedVersion,
		UpdatedAt:       toTime(scan.UpdatedAt),
		Discoverer:      scan.Discoverer,
	})
	return rows, interpretError(err)
}
