package coordinator

import (
	"context"
	"errors"
	"time"

	"github.com/powercontext/powercontext/db"
)

// Bounded error pairs of the ledger itself (docs/protocol.md#errors).
const (
	ErrorCategoryLease        = "lease"
	ErrorCodeLeaseExpired     = "lease_expired"
	ErrorCategoryCancellation = "cancellation"
	ErrorCodeCancelRequested  = "cancel_requested"
)

// ClaimRequest asks for at most Slots items.
type ClaimRequest struct {
	Owner     string
	Supported Supported
	Slots     int
	Lease     time.Duration
	// NewTrace returns the trace and span ids of the execution span the new attempt will run under; they are
	// stored on the attempt row so a later attempt can link to it. Optional.
	NewTrace func() (traceID, spanID string)
}

// ClaimResult reports one claim pass.
type ClaimResult struct {
	Claims      []Claim
	Expired     int               // expired lane heads recovered in this pass (claimable on the next pass)
	Expirations []LeaseExpiration // one per recovered lane head, committed
}

// LeaseExpiration is one expired lease recovered by a claim pass (docs/protocol.md#lease-expiry): the item's kind and the outcome
// its old attempt finished with (lease_expired_retry, lease_expired_failed or cancelled).
type LeaseExpiration struct {
	Kind    string
	Outcome string
}

// Claim runs one claim pass (docs/protocol.md#claim): an unlocked candidate query over lane heads, then per candidate a short
// transaction locking lane → key → item that re-checks the head and claims it (or expires it, docs/protocol.md#lease-expiry). It
// never claims more than req.Slots items and never claims an unsupported (kind, payload_version).
func (l *Ledger) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	var res ClaimResult
	if req.Slots <= 0 {
		return res, nil
	}
	if req.Owner == "" || len(req.Owner) > 128 {
		return res, invalidArgument("owner must be 1..128 bytes")
	}
	if req.Lease <= 0 {
		return res, invalidArgument("lease must be positive")
	}
	limit := max(32, req.Slots*4)
	if l.store.SkipLocked() && l.path != PathPerItem {
		return l.claimMany(ctx, req, limit)
	}
	cands, err := l.store.WorkItemClaimCandidates(ctx, db.WorkItemClaimCandidatesParams{Kinds: req.Supported.Kinds(), Limit: int32(limit)})
	if err != nil {
		return res, err
	}
	for _, c := range cands {
		if len(res.Claims) >= req.Slots {
			break
		}
		expired := c.Status == db.StatusRunning || c.Status == db.StatusCancelling
		if !expired && !req.Supported.Has(c.Kind, c.PayloadVersion) {
			continue // unsupported heads wait (readiness reports misconfigured)
		}
		claim, ok, expiredOutcome, err := l.claimOne(ctx, c, req)
		if err != nil {
			return res, err
		}
		if expiredOutcome != "" {
			res.Expired++
			res.Expirations = append(res.Expirations, LeaseExpiration{Kind: c.Kind, Outcome: expiredOutcome})
		}
		if ok {
			res.Claims = append(res.Claims, claim)
		}
	}
	return res, nil
}

// claimMany is the claim pass of a store that skips locked rows (docs/protocol.md#set-based-claim): one
// WorkItemClaimMany locks up to req.Slots due, supported lane heads with their lanes without waiting, re-checks and
// claims them and reports the expired heads it saw; those are then recovered one by one (claimOne) while slots are
// left. PathSet asks the store (one statement on PostgreSQL, the per-row chain in one transaction elsewhere);
// PathBatched runs the per-row chain (db.ChainWorkItemClaimMany) in one transaction on every engine.
func (l *Ledger) claimMany(ctx context.Context, req ClaimRequest, limit int) (ClaimResult, error) {
	p := db.WorkItemClaimManyParams{Supported: req.Supported.list(), Candidates: int32(limit), Slots: int32(req.Slots),
		Owner: req.Owner, Lease: req.Lease}
	if req.NewTrace != nil {
		p.TraceIDs, p.SpanIDs = make([]string, req.Slots), make([]string, req.Slots)
		for i := range req.Slots {
			p.TraceIDs[i], p.SpanIDs[i] = req.NewTrace()
		}
	}
	var set db.WorkItemClaimManyResult
	var err error
	if l.path == PathSet {
		set, err = l.store.WorkItemClaimMany(ctx, p)
	} else {
		err = l.inTx(ctx, func(ctx context.Context, tx *ledgerTx) error {
			set, err = db.ChainWorkItemClaimMany(ctx, tx, p)
			return err
		})
	}
	if err != nil {
		return ClaimResult{}, err
	}
	var res ClaimResult
	if l.path == PathSet { // the store's own transaction, committed: its wake-ups by the same rule
		claimed := make([]db.WorkItem, len(set.Claimed))
		for i, c := range set.Claimed {
			claimed[i] = c.Item
		}
		l.committedOutside(claimed)
	}
	for _, c := range set.Claimed {
		claim := Claim{Item: c.Item, Owner: req.Owner, Fence: c.Item.LeaseFence, AttemptNo: c.Item.AttemptCount,
			LeaseExpiresAt: c.Item.LeaseExpiresAt, PreviousTraceID: c.PreviousTraceID, PreviousSpanID: c.PreviousSpanID}
		if c.Slot >= 1 && int(c.Slot) <= len(p.TraceIDs) {
			claim.TraceID, claim.SpanID = p.TraceIDs[c.Slot-1], p.SpanIDs[c.Slot-1]
		}
		res.Claims = append(res.Claims, claim)
	}
	return res, l.recoverExpired(ctx, req, set.Expired, &res)
}

// recoverExpired recovers expired lane heads one by one (claimOne) while slots are left, after a set or batched
// pass. A head another claimer recovered since it was read is claimable by then, and claimOne claims it: that claim
// is this pass's and is returned with the others. Dropping it would leave the item running under an owner that
// never heard of it until its lease expired again, and a lane whose head keeps expiring would keep losing it.
func (l *Ledger) recoverExpired(ctx context.Context, req ClaimRequest, expired []db.ClaimCandidate, res *ClaimResult) error {
	for _, c := range expired {
		if len(res.Claims) >= req.Slots {
			break
		}
		claim, ok, outcome, err := l.claimOne(ctx, c, req)
		if err != nil {
			return err
		}
		if ok {
			res.Claims = append(res.Claims, claim)
		}
		if outcome != "" {
			res.Expired++
			res.Expirations = append(res.Expirations, LeaseExpiration{Kind: c.Kind, Outcome: outcome})
		}
	}
	return nil
}

// claimOne claims or expires one candidate; expired is the old attempt's outcome when it recovered an expired
// lease ("" otherwise).
func (l *Ledger) claimOne(ctx context.Context, c db.ClaimCandidate, req ClaimRequest) (claim Claim, ok bool, expired string, err error) {
	err = l.inTx(ctx, func(ctx context.Context, q *ledgerTx) error {
		ok, expired = false, ""
		// A due head is claimed under lane → item: claiming neither reads nor writes the logical key. Recovering an
		// expired lease may finish the lane (cancelled) and delete the key, so it takes lane → key → item.
		var (
			lane   db.WorkLane
			hasKey bool
			item   db.WorkItem
			now    time.Time
			err    error
		)
		keyLocked := c.Status == db.StatusRunning || c.Status == db.StatusCancelling
		if keyLocked {
			lane, hasKey, item, now, err = lockLaneKeyItem(ctx, q, c.LaneKey, c.LogicalKey, c.WorkID)
		} else {
			lane, item, now, err = lockLaneItem(ctx, q, c.LaneKey, c.WorkID)
		}
		if errors.Is(err, db.ErrNotFound) {
			return nil // purged or never committed: nothing to do
		}
		if err != nil {
			return err
		}
		if lane.HeadSequence != item.LaneSequence {
			return nil // no longer the head
		}
		switch item.Status {
		case db.StatusQueued, db.StatusRetryWait:
			if item.AvailableAt.After(now) || !req.Supported.Has(item.Kind, item.PayloadVersion) {
				return nil
			}
			claim, err = claimItem(ctx, q, item, now, req)
			ok = err == nil
			return err
		case db.StatusRunning, db.StatusCancelling:
			if item.LeaseExpiresAt.After(now) || !keyLocked {
				return nil // running, or expired since the candidate query: the next pass recovers it under the key lock
			}
			expired, err = expireItem(ctx, q, lane, hasKey, item, now)
			return err
		}
		return nil
	})
	return claim, ok, expired, err
}

func claimItem(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time, req ClaimRequest) (Claim, error) {
	var prevTrace, prevSpan string
	if item.AttemptCount > 0 {
		prev, err := q.WorkAttemptGet(ctx, db.WorkAttemptGetParams{WorkID: item.WorkID, AttemptNo: item.AttemptCount})
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return Claim{}, err
		}
		prevTrace, prevSpan = prev.TraceID, prev.SpanID
	}
	prevVersion := item.StateVersion
	item.Status = db.StatusRunning
	item.LeaseOwner = req.Owner
	item.LeaseFence++
	item.LeaseExpiresAt = now.Add(req.Lease)
	item.AttemptCount++
	item.GenerationAttemptCount++
	item.StateVersion++
	item.UpdatedAt = now
	var traceID, spanID string
	if req.NewTrace != nil {
		traceID, spanID = req.NewTrace()
	}
	// The state write and the attempt insert are one composite step (one round trip on PostgreSQL).
	if err := matchedOne(q.WorkItemUpdateStateInsertAttempt(ctx, db.WorkItemUpdateStateInsertAttemptParams{
		State: db.WorkItemUpdateStateParams{Item: item, ExpectedVersion: prevVersion},
		Attempt: db.WorkAttempt{
			WorkID:             item.WorkID,
			AttemptNo:          item.AttemptCount,
			RecoveryGeneration: item.RecoveryGeneration,
			OwnerID:            req.Owner,
			Fence:              item.LeaseFence,
			StartedAt:          now,
			TraceID:            traceID,
			SpanID:             spanID,
		},
	})); err != nil {
		return Claim{}, err
	}
	return Claim{
		Item:            item,
		Owner:           req.Owner,
		Fence:           item.LeaseFence,
		AttemptNo:       item.AttemptCount,
		LeaseExpiresAt:  item.LeaseExpiresAt,
		TraceID:         traceID,
		SpanID:          spanID,
		PreviousTraceID: prevTrace,
		PreviousSpanID:  prevSpan,
	}, nil
}

// expireItem recovers an expired lease (docs/protocol.md#lease-expiry): the old attempt finishes as lease_expired_retry (→ retry_wait,
// available now), lease_expired_failed (budget spent → failed) or cancelled (cancel requested). The fence is
// unchanged; the next claim raises it. It returns the old attempt's outcome.
func expireItem(ctx context.Context, q db.Queries, lane db.WorkLane, hasKey bool, item db.WorkItem, now time.Time) (string, error) {
	prevVersion := item.StateVersion
	attempt := db.WorkAttemptFinishParams{WorkID: item.WorkID, AttemptNo: item.AttemptCount, FinishedAt: now}
	item.LeaseOwner = ""
	item.LeaseExpiresAt = time.Time{}
	item.StateVersion++
	item.UpdatedAt = now
	cancelled := item.Status == db.StatusCancelling || item.CancelRequested
	switch {
	case cancelled:
		item.Status = db.StatusCancelled
		item.CompletedAt = now
		item.ErrorCategory, item.ErrorCode = ErrorCategoryCancellation, ErrorCodeCancelRequested
		attempt.Outcome = db.OutcomeCancelled
		attempt.ErrorCategory, attempt.ErrorCode = ErrorCategoryCancellation, ErrorCodeCancelRequested
	case item.GenerationAttemptCount < item.MaxAttempts:
		item.Status = db.StatusRetryWait
		item.AvailableAt = now
		item.ErrorCategory, item.ErrorCode = ErrorCategoryLease, ErrorCodeLeaseExpired
		attempt.Outcome = db.OutcomeLeaseExpiredRetry
		attempt.ErrorCategory, attempt.ErrorCode = ErrorCategoryLease, ErrorCodeLeaseExpired
	default:
		item.Status = db.StatusFailed
		item.CompletedAt = now
		item.ErrorCategory, item.ErrorCode = ErrorCategoryLease, ErrorCodeLeaseExpired
		attempt.Outcome = db.OutcomeLeaseExpiredFailed
		attempt.ErrorCategory, attempt.ErrorCode = ErrorCategoryLease, ErrorCodeLeaseExpired
	}
	if err := updateState(ctx, q, item, prevVersion); err != nil {
		return "", err
	}
	if _, err := q.WorkAttemptFinish(ctx, attempt); err != nil {
		return "", err
	}
	if cancelled {
		return attempt.Outcome, finishLane(ctx, q, lane, hasKey, item)
	}
	return attempt.Outcome, nil
}
