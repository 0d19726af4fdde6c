package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The statements of forgetting and erasing a scope and of the revision retention (db.ScopeLifecycleQueries).

func (q queries) ExperienceCandidateWithdraw(ctx context.Context, p db.ExperienceCandidateWithdrawParams) (int64, error) {
	return errs.Rows(q.q.ExperienceCandidateWithdraw(ctx, mysqlgen.ExperienceCandidateWithdrawParams{CandidateID: p.CandidateID, UpdatedAt: conv.TimeToGen[time.Time](p.UpdatedAt)}))
}

func (q queries) WorkItemListFinishedByScope(ctx context.Context, p db.WorkItemListFinishedByScopeParams) ([]string, error) {
	rs, err := q.q.WorkItemListFinishedByScope(ctx, mysqlgen.WorkItemListFinishedByScopeParams(p))
	return conv.Many(errs, rs, err, func(s string) string { return s })
}

func (q queries) MemoryRevisionListExpired(ctx context.Context, p db.MemoryRevisionListExpiredParams) ([]db.MemoryRevisionRef, error) {
	rs, err := q.q.MemoryRevisionListExpired(ctx, mysqlgen.MemoryRevisionListExpiredParams(p))
	return conv.Many(errs, rs, err, func(r mysqlgen.MemoryRevisionListExpiredRow) db.MemoryRevisionRef { return db.MemoryRevisionRef(r) })
}
