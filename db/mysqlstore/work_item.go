package mysqlstore

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// WorkItemClaimCandidates passes the limit to each branch of the query and to the outer LIMIT. While the last
// answer was full (at least the limit: many due heads), it asks WorkItemClaimCandidatesByDue first, which reads the
// due index instead of probing every busy lane, and falls back to WorkItemClaimCandidates when that comes back short
// (docs/protocol.md#claim-candidates-in-mysql-mode). A short answer of WorkItemClaimCandidatesByDue is not used: its
// queued branch may have stopped at its bound before heads it did not reach; and the passes after it skip it, a
// number that doubles with every short answer in a row, so a lane deep behind a blocked head does not make every
// pass run both queries.
func (q queries) WorkItemClaimCandidates(ctx context.Context, p db.WorkItemClaimCandidatesParams) ([]db.ClaimCandidate, error) {
	byDue := q.byDue != nil && !q.flavor.oceanBase
	if byDue && q.byDue.try() {
		cands, err := q.claimCandidatesByDue(ctx, p, dueScanBound(p.Limit))
		if err != nil {
			return nil, err
		}
		full := len(cands) >= int(p.Limit)
		q.byDue.answered(full)
		if full {
			return cands, nil
		}
	}
	rs, err := q.q.WorkItemClaimCandidates(ctx, mysqlgen.WorkItemClaimCandidatesParams{
		Kinds: p.Kinds, Limit: p.Limit, Limit_2: p.Limit, Limit_3: p.Limit, Limit_4: p.Limit,
	})
	if byDue && err == nil {
		q.byDue.full.Store(len(rs) >= int(p.Limit))
	}
	return conv.Many(errs, rs, err, conv.ClaimCandidateFromGen)
}

// dueFirst remembers which candidate query to ask first. It is a heuristic shared by concurrent passes, so a pass
// may act on a slightly stale value; either query's full answer is right.
type dueFirst struct {
	full    atomic.Bool  // WorkItemClaimCandidates' last answer was full: many due heads
	skip    atomic.Int32 // passes left that skip WorkItemClaimCandidatesByDue after it came back short
	backoff atomic.Int32 // the last skip granted: doubled by a short answer (up to dueBackoffMax), cleared by a full one
}

// dueBackoffMax bounds the passes skipped after short answers in a row: at most one pass in 65 pays for a
// WorkItemClaimCandidatesByDue that cannot answer.
const dueBackoffMax = 64

// try reports whether this pass asks WorkItemClaimCandidatesByDue first, counting a skipped pass.
func (d *dueFirst) try() bool {
	if !d.full.Load() {
		return false
	}
	for {
		n := d.skip.Load()
		if n <= 0 {
			return true
		}
		if d.skip.CompareAndSwap(n, n-1) { // two concurrent passes cannot both take the last skip
			return false
		}
	}
}

// answered records whether WorkItemClaimCandidatesByDue's answer was full.
func (d *dueFirst) answered(full bool) {
	if full {
		d.backoff.Store(0)
		return
	}
	b := min(max(2*d.backoff.Load(), 1), dueBackoffMax)
	d.backoff.Store(b)
	d.skip.Store(b)
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
