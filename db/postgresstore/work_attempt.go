package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func workAttemptFromRow(r postgresgen.PcWorkAttempt) db.WorkAttempt {
	return db.WorkAttempt{
		WorkID:             r.WorkID,
		AttemptNo:          r.AttemptNo,
		RecoveryGeneration: r.RecoveryGeneration,
		OwnerID:            r.OwnerID,
		Fence:              r.Fence,
		StartedAt:          fromTime(r.StartedAt),
		HeartbeatAt:        fromTimePtr(r.HeartbeatAt),
		FinishedAt:         fromTimePtr(r.FinishedAt),
		Outcome:            fromTextPtr(r.Outcome),
		ErrorCategory:      fromTextPtr(r.ErrorCategory),
		ErrorCode:          fromTextPtr(r.ErrorCode),
		TraceID:            fromTextPtr(r.TraceID),
		SpanID:             fromTextPtr(r.SpanID),
	}
}

func (s queries) WorkAttemptInsert(ctx context.Context, a db.WorkAttempt) error {
	return interpretError(s.q.WorkAttemptInsert(ctx, postgresgen.WorkAttemptInsertParams{
		WorkID:             a.WorkID,
		AttemptNo:          a.AttemptNo,
		RecoveryGeneration: a.RecoveryGeneration,
		OwnerID:            a.OwnerID,
		Fence:              a.Fence,
		StartedAt:          toTime(a.StartedAt),
		HeartbeatAt:        toTimePtr(a.HeartbeatAt),
		FinishedAt:         toTimePtr(a.FinishedAt),
		Outcome:            toTextPtr(a.Outcome),
		ErrorCategory:      toTextPtr(a.ErrorCategory),
		ErrorCode:          toTextPtr(a.ErrorCode),
		TraceID:            toTextPtr(a.TraceID),
		SpanID:             toTextPtr(a.SpanID),
	}))
}

func (s queries) WorkAttemptFinish(ctx context.Context, p db.FinishAttemptParams) (int64, error) {
	rows, err := s.q.WorkAttemptFinish(ctx, postgresgen.WorkAttemptFinishParams{
		FinishedAt:    toTime(p.FinishedAt),
		Outcome:       p.Outcome,
		ErrorCategory: toTextPtr(p.ErrorCategory),
		ErrorCode:     toTextPtr(p.ErrorCode),
		WorkID:        p.WorkID,
		AttemptNo:     p.AttemptNo,
	})
	return rows, interpretError(err)
}

func (s queries) WorkAttemptHeartbeat(ctx context.Context, workID string, attemptNo int32, at time.Time) (int64, error) {
	rows, err := s.q.WorkAttemptHeartbeat(ctx, postgresgen.WorkAttemptHeartbeatParams{
		HeartbeatAt: toTime(at),
		WorkID:      workID,
		AttemptNo:   attemptNo,
	})
	return rows, interpretError(err)
}

func (s queries) WorkAttemptGet(ctx context.Context, workID string, attemptNo int32) (db.WorkAttempt, error) {
	r, err := s.q.WorkAttemptGet(ctx, postgresgen.WorkAttemptGetParams{WorkID: workID, AttemptNo: attemptNo})
	if err != nil {
		return db.WorkAttempt{}, interpretError(err)
	}
	return workAttemptFromRow(r), nil
}

func (s queries) WorkAttemptListByWorkID(ctx context.Context, workID string) ([]db.WorkAttempt, error) {
	rs, err := s.q.WorkAttemptListByWorkID(ctx, workID)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.WorkAttempt, 0, len(rs))
	for _, r := range rs {
		out = append(out, workAttemptFromRow(r))
	}
	return out, nil
}

func (s queries) WorkAttemptDeleteByWorkIDs(ctx context.Context, workIDs []string) (int64, error) {
	if len(workIDs) == 0 {
		return 0, nil
	}
	rows, err := s.q.WorkAttemptDeleteByWorkIDs(ctx, workIDs)
	return rows, interpretError(err)
}
