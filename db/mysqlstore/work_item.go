package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// WorkItemClaimCandidates passes the limit to each branch of the query and to the outer LIMIT.
func (q queries) WorkItemClaimCandidates(ctx context.Context, p db.WorkItemClaimCandidatesParams) ([]db.ClaimCandidate, error) {
	rs, err := q.q.WorkItemClaimCandidates(ctx, mysqlgen.WorkItemClaimCandidatesParams{
		Kinds: p.Kinds, Limit: p.Limit, Limit_2: p.Limit, Limit_3: p.Limit, Limit_4: p.Limit,
	})
	return conv.Many(errs, rs, err, conv.ClaimCandidateFromGen)
}

// WorkItemList passes absent filters as "" and an absent keyset position as NULL.
func (q queries) WorkItemList(ctx context.Context, p db.WorkItemListParams) ([]db.WorkItem, error) {
	arg := mysqlgen.WorkItemListParams{
		Kinds:        p.Kinds,
		ScopeID:      p.ScopeID,
		Status:       p.Status,
		BeforeWorkID: p.BeforeWorkID,
		Limit:        p.Limit,
	}
	if !p.BeforeCreatedAt.IsZero() {
		before := conv.TimeToGen[time.Time](p.BeforeCreatedAt)
		arg.BeforeCreatedAt = &before
	}
	rs, err := q.q.WorkItemList(ctx, arg)
	return conv.Many(errs, rs, err, conv.WorkItemFromGen)
}
