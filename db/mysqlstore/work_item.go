package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// WorkItemClaimCandidates passes the limit to each branch of the query and to the outer LIMIT. While the last
// answer was full (at least the limit: many due heads), it asks WorkItemClaimCandidatesByDue first, which reads the
// due index instead of probing every busy lane, and falls back to WorkItemClaimCandidates when that comes back short
// (docs/protocol.md#claim-candidates-in-mysql-mode). A short answer of WorkItemClaimCandidatesByDue is not used: its
// queued branch may have stopped at its bound before heads it did not reach.
func (q queries) WorkItemClaimCandidates(ctx context.Context, p db.WorkItemClaimCandidatesParams) ([]db.ClaimCandidate, error) {
	byDue := q.byDue != nil && !q.flavor.oceanBase
	if byDue && q.byDue.Load() {
		cands, err := q.claimCandidatesByDue(ctx, p, dueScanBound(p.Limit))
		if err != nil || len(cands) >= int(p.Limit) {
			return cands, err
		}
		q.byDue.Store(false)
	}
	rs, err := q.q.WorkItemClaimCandidates(ctx, mysqlgen.WorkItemClaimCandidatesParams{
		Kinds: p.Kinds, Limit: p.Limit, Limit_2: p.Limit, Limit_3: p.Limit, Limit_4: p.Limit,
	})
	if byDue && err == nil && len(rs) >= int(p.Limit) {
		q.byDue.Store(true)
	}
	return conv.Many(errs, rs, err, conv.ClaimCandidateFromGen)
}

// dueScanBound is how many due queued items WorkItemClaimCandidatesByDue reads for a limit: room for limit + 32
// items queued behind the heads that run (each lane runs one item at a time) before it comes back short. The query
// reads every one of them on every pass, so the room is kept small: 8·limit+64 cost 6–12 % of MariaDB's B1
// throughput (docs/protocol.md#claim-candidates-in-mysql-mode).
func dueScanBound(limit int32) int32 { return 2*limit + 32 }

// claimCandidatesByDue runs WorkItemClaimCandidatesByDue, its queued branch reading at most scan items.
func (q queries) claimCandidatesByDue(ctx context.Context, p db.WorkItemClaimCandidatesParams, scan int32) ([]db.ClaimCandidate, error) {
	rs, err := q.q.WorkItemClaimCandidatesByDue(ctx, mysqlgen.WorkItemClaimCandidatesByDueParams{
		Kinds: p.Kinds, Limit: scan, Limit_2: p.Limit, Limit_3: p.Limit, Limit_4: p.Limit, Limit_5: p.Limit, Limit_6: p.Limit,
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
