package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func workAttemptFromGen(r mysqlgen.PcWorkAttempt) db.WorkAttempt {
	return db.WorkAttempt{
		WorkID:             r.WorkID,
		AttemptNo:          r.AttemptNo,
		RecoveryGeneration: r.RecoveryGeneration,
		OwnerID:            r.OwnerID,
		Fence:              r.Fence,
		StartedAt:          r.StartedAt.UTC(),
		HeartbeatAt:        fromNullTime(r.HeartbeatAt),
		FinishedAt:         fromNullTime(r.FinishedAt),
		Outcome:            fromNullString(r.Outcome),
		ErrorCategory:      fromNullString(r.ErrorCategory),
		ErrorCode:          fromNullString(r.ErrorCode),
		TraceID:            fromNullString(r.TraceID),
		SpanID:             fromNullString(r.SpanID),
	}
}

func (q *queries) WorkAttemptInsert(ctx context.Context, a db.WorkAttempt) error {
	return interpretError(q.q.WorkAttemptInsert(ctx, mysqlgen.WorkAttemptInsertParams{
		WorkID:             a.WorkID,
		AttemptNo:          a.AttemptNo,
		RecoveryGeneration: a.RecoveryGeneration,
		OwnerID:            a.OwnerID,
		Fence:              a.Fence,
		StartedAt:          ts(a.StartedAt),
		HeartbeatAt:        nullTime(a.HeartbeatAt),
		FinishedAt:         nullTime(a.FinishedAt),
		Outcome:            nullString(a.Outcome),
		ErrorCategory:      nullString(a.ErrorCategory),
		ErrorCode:          nullString(a.ErrorCode),
		TraceID:            nullString(a.TraceID),
		SpanID:             nullString(a.SpanID),
	}))
}

func (q *queries) WorkAttemptFinish(ctx context.Context, p db.FinishAttemptParams) (int64, error) {
	n, err := q.q.WorkAttemptFinish(ctx, mysqlgen.WorkAttemptFinishParams{
		FinishedAt:    nullTime(p.FinishedAt),
		Outcome:       nullString(p.Outcome),
		ErrorCategory: nullString(p.ErrorCategory),
		ErrorCode:     nullString(p.ErrorCode),
		WorkID:        p.WorkID,
		AttemptNo:     p.AttemptNo,
	})
	return n, interpretError(err)
}

func (q *queries) WorkAttemptHeartbeat(ctx context.Context, workID string, attemptNo int32, at time.Time) (int64, error) {
	n, err := q.q.WorkAttemptHeartbeat(ctx, mysqlgen.WorkAttemptHeartbeatParams{
		HeartbeatAt: nullTime(at),
		WorkID:      workID,
		AttemptNo:   attemptNo,
	})
	return n, interpretError(err)
}

func (q *queries) WorkAttemptGet(ctx context.Context, workID string, attemptNo int32) (db.WorkAttempt, error) {
	r, err := q.q.WorkAttemptGet(ctx, mysqlgen.WorkAttemptGetParams{WorkID: workID, AttemptNo: attemptNo})
	if err != nil {
		return db.WorkAttempt{}, interpretError(err)
	}
	return workAttemptFromGen(r), nil
}

func (q *queries) WorkAttemptListByWorkID(ctx context.Context, workID string) ([]db.WorkAttempt, error) {
	rows, err := q.q.WorkAttemptListByWorkID(ctx, workID)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.WorkAttempt, len(rows))
	for i, r := range rows {
		out[i] = workAttemptFromGen(r)
	}
	return out, nil
}

func (q *queries) WorkAttemptDeleteByWorkIDs(ctx context.Context, workIDs []string) (int64, error) {
	if len(workIDs) == 0 {
		return 0, nil
	}
	n, err := q.q.WorkAttemptDeleteByWorkIDs(ctx, workIDs)
	return n, interpretError(err)
}
