package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The statements of forgetting and erasing a scope and of the revision retention (db.ScopeLifecycleQueries).

func (q *queries) ExperienceCandidateWithdraw(ctx context.Context, p db.ExperienceCandidateWithdrawParams) (int64, error) {
	return errs.Rows(q.w.ExperienceCandidateWithdraw(ctx, sqlitegen.ExperienceCandidateWithdrawParams{CandidateID: p.CandidateID, UpdatedAt: conv.TimeToGen[int64](p.UpdatedAt)}))
}

func (q *queries) WorkItemListFinishedByScope(ctx context.Context, p db.WorkItemListFinishedByScopeParams) ([]string, error) {
	rs, err := q.r.WorkItemListFinishedByScope(ctx, sqlitegen.WorkItemListFinishedByScopeParams(p))
	return conv.Many(errs, rs, err, func(s string) string { return s })
}

func (q *queries) MemoryRevisionListExpired(ctx context.Context, p db.MemoryRevisionListExpiredParams) ([]db.MemoryRevisionRef, error) {
	rs, err := q.r.MemoryRevisionListExpired(ctx, sqlitegen.MemoryRevisionListExpiredParams(p))
	return conv.Many(errs, rs, err, func(r sqlitegen.MemoryRevisionListExpiredRow) db.MemoryRevisionRef { return db.MemoryRevisionRef(r) })
}
