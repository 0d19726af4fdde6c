package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) WorkItemClaimCandidates(ctx context.Context, p db.WorkItemClaimCandidatesParams) ([]db.ClaimCandidate, error) {
	rs, err := q.q.WorkItemClaimCandidates(ctx, postgresgen.WorkItemClaimCandidatesParams{Kinds: nonNil(p.Kinds), Limit: p.Limit})
	return conv.Many(errs, rs, err, conv.ClaimCandidateFromGen)
}

// WorkItemList passes absent filters as NULL.
func (q queries) WorkItemList(ctx context.Context, p db.WorkItemListParams) ([]db.WorkItem, error) {
	arg := postgresgen.WorkItemListParams{
		Kinds:   nonNil(p.Kinds),
		ScopeID: conv.TextToGen(p.ScopeID),
		Status:  conv.TextToGen(p.Status),
		Limit:   p.Limit,
	}
	if !p.BeforeCreatedAt.IsZero() {
		before := conv.TimeToGen[time.Time](p.BeforeCreatedAt)
		arg.BeforeCreatedAt, arg.BeforeWorkID = &before, &p.BeforeWorkID
	}
	rs, err := q.q.WorkItemList(ctx, arg)
	return conv.Many(errs, rs, err, conv.WorkItemFromGen)
}

// nonNil sends an empty array rather than NULL for a nil slice (both match nothing in = ANY).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
