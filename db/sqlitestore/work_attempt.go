package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func attemptFromGen(r sqlitegen.PcWorkAttempt) db.WorkAttempt {
	return db.WorkAttempt{
		WorkID:             r.WorkID,
		AttemptNo:          int32(r.AttemptNo),
		RecoveryGeneration: int32(r.RecoveryGeneration),
		OwnerID:            r.OwnerID,
		Fence:              r.Fence,
		StartedAt:          fromMicros(r.StartedAt),
		HeartbeatAt:        fromNullMicros(r.HeartbeatAt),
		FinishedAt:         fromNullMicros(r.FinishedAt),
		Outcome:            fromNullString(r.Outcome),
		ErrorCategory:      fromNullString(r.ErrorCategory),
		ErrorCode:          fromNullString(r.ErrorCode),
		TraceID:            fromNullString(r.TraceID),
		SpanID:             fromNullString(r.SpanID),
	}
}

func (q *queries) WorkAttemptInsert(ctx context.Context, a db.WorkAttempt) error {
	return interpretError(q.w.WorkAttemptInsert(ctx, sqlitegen.WorkAttemptInsertParams{
		WorkID:             a.WorkID,
		AttemptNo:          int64(a.AttemptNo),
		RecoveryGeneration: int64(a.RecoveryGeneration),
		OwnerID:            a.OwnerID,
		Fence:              a.Fence,
		StartedAt:          toMicros(a.StartedAt),
		HeartbeatAt:        toNullMicros(a.HeartbeatAt),
		FinishedAt:         toNullMicros(a.FinishedAt),
		Outcome:            toNullString(a.Outcome),
		ErrorCategory:      toNullString(a.ErrorCategory),
		ErrorCode:          toNullString(a.ErrorCode),
		TraceID:            toNullString(a.TraceID),
		SpanID:             toNullString(a.SpanID),
	}))
}

func (q *queries) WorkAttemptFinish(ctx context.Context, p db.FinishAttemptParams) (int64, error) {
	return affected(q.w.WorkAttemptFinish(ctx, sqlitegen.WorkAttemptFinishParams{
		FinishedAt:    toNullMicros(p.FinishedAt),
		Outcome:       toNullString(p.Outcome),
		ErrorCategory: toNullString(p.ErrorCategory),
		ErrorCode:     toNullString(p.ErrorCode),
		WorkID:        p.WorkID,
		AttemptNo:     int64(p.AttemptNo),
	}))
}

func (q *queries) WorkAttemptHeartbeat(ctx context.Context, workID string, attemptNo int32, at time.Time) (int64, error) {
	return affected(q.w.WorkAttemptHeartbeat(ctx, sqlitegen.WorkAttemptHeartbeatParams{
		HeartbeatAt: toNullMicros(at),
		WorkID:      workID,
		AttemptNo:   int64(attemptNo),
	}))
}

func (q *queries) WorkAttemptGet(ctx context.Context, workID string, attemptNo int32) (db.WorkAttempt, error) {
	r, err := q.r.WorkAttemptGet(ctx, sqlitegen.WorkAttemptGetParams{WorkID: workID, AttemptNo: int64(attemptNo)})
	if err != nil {
		return db.WorkAttempt{}, interpretError(err)
	}
	return attemptFromGen(r), nil
}

func (q *queries) WorkAttemptListByWorkID(ctx context.Context, workID string) ([]db.WorkAttempt, error) {
	rows, err := q.r.WorkAttemptListByWorkID(ctx, workID)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.WorkAttempt, 0, len(rows))
	for _, r := range rows {
		out = append(out, attemptFromGen(r))
	}
	return out, nil
}

func (q *queries) WorkAttemptDeleteByWorkIDs(ctx context.Context, workIDs []string) (int64, error) {
	if len(workIDs) == 0 {
		return 0, nil
	}
	return affected(q.w.WorkAttemptDeleteByWorkIDs(ctx, workIDs))
}
