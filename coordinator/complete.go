package coordinator

import (
	"context"
	"sort"
	"time"

	"github.com/powercontext/powercontext/db"
)

// DomainCommit applies a handler's result inside the ledger's final transaction, after the claim was verified
// and with lane, key and item locked. It takes the domain cursor lock (the last in the global order), checks the
// cursor exactly and advances it with compare-and-set. It must not call the Store outside q. now is the database
// time the claim was verified at, read by the item lock's own statement: the commit stamps its rows with it (no
// second clock read), so a row's time is the moment the lease was checked, even when the connection then stalls
// with the locks held — nobody can recover the item meanwhile (docs/protocol.md#complete).
type DomainCommit func(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time) error

// Result is what a successful attempt stores on the item.
type Result struct {
	Code    string // bounded, e.g. "processed", "already_committed"
	Payload any    // JSON object or nil
}

// Failure is a classified handler failure: a bounded (category, code) pair, never exception text.
type Failure struct {
	Category  string
	Code      string
	Retryable bool
}

// HeartbeatResult reports a successful heartbeat.
type HeartbeatResult struct {
	LeaseExpiresAt  time.Time
	CancelRequested bool // the operator asked to cancel: stop work and ConfirmCancelled
}

// Heartbeat extends the claim's lease to now + lease on database time. It does not bump state_version. It fails
// with ErrStaleWorkClaim when the claim was lost; when cancel was requested it extends nothing and reports it.
func (l *Ledger) Heartbeat(ctx context.Context, c Claim, lease time.Duration) (HeartbeatResult, error) {
	var res HeartbeatResult
	err := l.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		res = HeartbeatResult{}
		item, now, err := q.WorkItemLock(ctx, c.Item.WorkID)
		if err != nil {
			return err
		}
		switch err := verifyClaim(item, c, now); err {
		case nil:
		case ErrCancelRequested:
			res.CancelRequested = true
			return nil
		default:
			return err
		}
		expires := now.Add(lease)
		n, err := q.WorkItemExtendLease(ctx, db.WorkItemExtendLeaseParams{
			WorkID: c.Item.WorkID, LeaseOwner: c.Owner, LeaseFence: c.Fence, AttemptCount: c.AttemptNo, LeaseExpiresAt: expires,
		})
		if err != nil {
			return err
		}
		if n != 1 {
			return ErrStaleWorkClaim
		}
		if _, err := q.WorkAttemptHeartbeat(ctx, db.WorkAttemptHeartbeatParams{WorkID: c.Item.WorkID, AttemptNo: c.AttemptNo, HeartbeatAt: now}); err != nil {
			return err
		}
		res.LeaseExpiresAt = expires
		return nil
	})
	return res, err
}

// Complete is the final short transaction (docs/protocol.md#complete): lock lane → key → item, verify the claim on database
// time, run the domain commit, mark succeeded, finish the attempt, delete the key and advance the lane head. All of
// it commits or none of it does. A cancel request returns ErrCancelRequested and the domain commit never runs.
func (l *Ledger) Complete(ctx context.Context, c Claim, result Result, commit DomainCommit) (done db.WorkItem, err error) {
	if l.hooks.Commit != nil {
		var end func(error)
		ctx, end = l.hooks.Commit(ctx, c)
		defer func() { end(err) }()
	}
	return l.complete(ctx, c, result, commit)
}

func (l *Ledger) complete(ctx context.Context, c Claim, result Result, commit DomainCommit) (db.WorkItem, error) {
	payload, err := resultPayload(result)
	if err != nil {
		return db.WorkItem{}, err
	}
	var done db.WorkItem
	err = l.inTx(ctx, func(ctx context.Context, q *ledgerTx) error {
		var err error
		done, err = completeIn(ctx, q, c, result.Code, payload, commit)
		return err
	})
	return done, err
}

// boundedCode reports whether s is 1..n printable ASCII characters: the form of a result code and of an error pair,
// which every engine stores as ASCII (a byte outside it would fail the whole statement of a set-based completion
// on MySQL mode, and be stored as it came elsewhere).
func boundedCode(s string, n int) bool {
	if s == "" || len(s) > n {
		return false
	}
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// bounded reports whether f is a bounded error pair (docs/protocol.md#errors).
func (f Failure) bounded() bool { return boundedCode(f.Category, 64) && boundedCode(f.Code, 128) }

// resultPayload validates a result and canonicalises its payload.
func resultPayload(result Result) ([]byte, error) {
	if !boundedCode(result.Code, 64) {
		return nil, invalidArgument("result code must be 1..64 printable ASCII characters")
	}
	if result.Payload == nil {
		return nil, nil
	}
	return CanonicalJSON(result.Payload)
}

// completeIn is Complete's work inside the caller's transaction (or savepoint).
func completeIn(ctx context.Context, q db.Queries, c Claim, code string, payload []byte, commit DomainCommit) (db.WorkItem, error) {
	// The key is deleted while it is locked (a stale claim rolls the deletion back with everything else).
	lane, item, now, err := lockLaneDeleteKeyItem(ctx, q, c.Item.LaneKey, c.Item.LogicalKey, c.Item.WorkID)
	if err != nil {
		return db.WorkItem{}, err
	}
	if !unsafeSkipFence {
		if err := verifyClaim(item, c, now); err != nil {
			return db.WorkItem{}, err
		}
	}
	if commit != nil {
		if err := commit(ctx, q, item, now); err != nil {
			return db.WorkItem{}, err
		}
	}
	prevVersion := item.StateVersion
	item = succeeded(item, code, payload, now)
	// The state write, the attempt's finish and the head's advance (the key is already deleted) are one
	// composite step (one round trip on PostgreSQL).
	fin := db.WorkItemUpdateStateFinishAttemptParams{
		State: db.WorkItemUpdateStateParams{Item: item, ExpectedVersion: prevVersion},
		Attempt: db.WorkAttemptFinishParams{
			WorkID: item.WorkID, AttemptNo: item.AttemptCount, FinishedAt: now, Outcome: db.OutcomeSucceeded,
		},
	}
	if lane.HeadSequence == item.LaneSequence {
		fin.AdvanceHead = &db.WorkLaneAdvanceHeadParams{LaneKey: lane.LaneKey, AfterSequence: item.LaneSequence}
	}
	if err := matchedOne(q.WorkItemUpdateStateFinishAttempt(ctx, fin)); err != nil {
		return db.WorkItem{}, err
	}
	return item, nil
}

// succeeded is item as a successful completion at now writes it.
func succeeded(item db.WorkItem, code string, payload []byte, now time.Time) db.WorkItem {
	item.Status = db.StatusSucceeded
	item.LeaseOwner, item.LeaseExpiresAt = "", time.Time{}
	item.ResultCode, item.ResultPayload = code, payload
	item.ErrorCategory, item.ErrorCode = "", ""
	item.StateVersion++
	item.UpdatedAt, item.CompletedAt = now, now
	return item
}

// Completion is one item of a CompleteMany batch.
type Completion struct {
	Claim  Claim
	Result Result
	Commit DomainCommit
	Alone  bool // commit it through Complete on its own, outside the batch (Prepared.Alone)
}

// CompletionResult is the outcome of one Completion: the item as committed, or the item's own error
// (ErrStaleWorkClaim, ErrCancelRequested, an invalid result, its domain commit's error) or the batch's.
type CompletionResult struct {
	Item db.WorkItem
	Err  error
}

// CompleteMany completes many claims in one transaction (docs/protocol.md#complete-many): the items run in ascending
// lane_key order (so the batch keeps lane → key → item → domain across lanes), each inside its own savepoint, with
// exactly Complete's steps: lock lane → key → item, verify the claim on database time, run its domain commit, mark
// it succeeded, finish the attempt and advance the lane head. An item whose claim is stale or cancelled, or whose
// domain commit fails, rolls back only its savepoint and reports its own error; the others commit together. When
// the transaction itself fails (the database, the COMMIT), every item not already refused reports that error.
// Results are in the order of cs.
func (l *Ledger) CompleteMany(ctx context.Context, cs []Completion) []CompletionResult {
	out := make([]CompletionResult, len(cs))
	var alone []int
	for i, c := range cs {
		if c.Alone {
			alone = append(alone, i)
		}
	}
	l.completeBatch(ctx, cs, out)
	for _, i := range alone { // after the batch's transaction has ended
		out[i].Item, out[i].Err = l.Complete(ctx, cs[i].Claim, cs[i].Result, cs[i].Commit)
	}
	return out
}

// completeBatch is CompleteMany's one transaction over the completions not marked Alone, filling their results.
func (l *Ledger) completeBatch(ctx context.Context, cs []Completion, out []CompletionResult) {
	payloads := make([][]byte, len(cs))
	order := make([]int, 0, len(cs))
	for i, c := range cs {
		if c.Alone {
			continue
		}
		p, err := resultPayload(c.Result)
		if err != nil {
			out[i].Err = err
			continue
		}
		payloads[i] = p
		order = append(order, i)
	}
	if len(order) == 0 {
		return
	}
	sort.SliceStable(order, func(a, b int) bool { return cs[order[a]].Claim.Item.LaneKey < cs[order[b]].Claim.Item.LaneKey })
	ends := make(map[int]func(error), len(order))
	if l.hooks.Commit != nil {
		for _, i := range order {
			_, ends[i] = l.hooks.Commit(ctx, cs[i].Claim)
		}
	}
	itemErr := make([]bool, len(cs))
	err := l.inTx(ctx, func(ctx context.Context, q *ledgerTx) error {
		// The broken unsafe_nofence build takes the per-item path: the set-based finish joins each item's unfinished
		// attempt, which also refuses most zombies, so there the missing claim check would rarely show (the e2e
		// broken-build round lost sight of it once completions batched more, docs/protocol.md#fencing).
		if l.path == PathSet && !unsafeSkipFence {
			return l.completeSet(ctx, q, cs, order, payloads, out, itemErr)
		}
		for _, i := range order {
			out[i], itemErr[i] = CompletionResult{}, false
			var done db.WorkItem
			fnErr, err := q.Savepoint(ctx, func(ctx context.Context, q db.Queries) error {
				var err error
				done, err = completeIn(ctx, q, cs[i].Claim, cs[i].Result.Code, payloads[i], cs[i].Commit)
				return err
			})
			if err != nil {
				return err
			}
			out[i] = CompletionResult{Item: done, Err: fnErr}
			itemErr[i] = fnErr != nil
		}
		return nil
	})
	for _, i := range order {
		if err != nil && !itemErr[i] {
			out[i] = CompletionResult{Err: err}
		}
		if end := ends[i]; end != nil {
			end(out[i].Err)
		}
	}
}

// completeSet is CompleteMany's transaction with the set-based methods (docs/protocol.md#set-based-completion):
// one pipelined batch locks every lane (ascending), key and item of the batch and reads the clock once they are all
// held; each claim is verified against that clock and its domain commit runs in its own savepoint (a refused item
// or a failed commit leaves the others alone); one statement then finishes every item that passed. out and itemErr
// are CompleteMany's, filled for the items in order.
func (l *Ledger) completeSet(ctx context.Context, q db.Queries, cs []Completion, order []int,
	payloads [][]byte, out []CompletionResult, itemErr []bool) error {
	refs := make([]db.WorkItemRef, len(order))
	for j, i := range order {
		c := cs[i].Claim.Item
		refs[j] = db.WorkItemRef{LaneKey: c.LaneKey, LogicalKey: c.LogicalKey, WorkID: c.WorkID}
	}
	locked, now, err := q.WorkLaneKeyItemLockMany(ctx, refs)
	if err != nil {
		return err
	}
	finish := make([]db.SucceedItem, 0, len(order))
	finishing := make(map[string]bool, len(order))
	for j, i := range order {
		out[i], itemErr[i] = CompletionResult{}, false
		refuse := func(err error) { out[i], itemErr[i] = CompletionResult{Err: err}, true }
		li := locked[j]
		if !li.Found {
			refuse(db.ErrNotFound)
			continue
		}
		if finishing[li.Item.WorkID] {
			// The same item twice in one batch: the first commits it, so this claim is stale, as in Complete.
			refuse(ErrStaleWorkClaim)
			continue
		}
		if !unsafeSkipFence {
			if err := verifyClaim(li.Item, cs[i].Claim, now); err != nil {
				refuse(err)
				continue
			}
		}
		if commit := cs[i].Commit; commit != nil {
			fnErr, err := q.Savepoint(ctx, func(ctx context.Context, q db.Queries) error { return commit(ctx, q, li.Item, now) })
			if err != nil {
				return err
			}
			if fnErr != nil {
				refuse(fnErr)
				continue
			}
		}
		finishing[li.Item.WorkID] = true
		out[i].Item = succeeded(li.Item, cs[i].Result.Code, payloads[i], now)
		finish = append(finish, db.SucceedItem{WorkID: li.Item.WorkID, ExpectedVersion: li.Item.StateVersion,
			ResultCode: cs[i].Result.Code, ResultPayload: payloads[i]})
	}
	if len(finish) == 0 {
		return nil
	}
	// The transaction's last statement: with the COMMIT where the store can (its guard fails the COMMIT unless every
	// item finished; under the locks held and the claims verified, each must).
	return q.WorkItemSucceedManyAtCommit(ctx, db.WorkItemSucceedManyParams{Now: now, Items: finish})
}

// Fail records a classified failure of the claim's attempt: retry_wait after delay when retryable and the
// generation's budget is not spent, else failed (the key and the lane head stay: the lane is blocked until an
// operator retries or cancels). A pending cancel request wins: the item becomes cancelled.
func (l *Ledger) Fail(ctx context.Context, c Claim, f Failure, delay time.Duration) (db.WorkItem, error) {
	if !f.bounded() {
		return db.WorkItem{}, invalidArgument("failure needs a bounded category and code")
	}
	if delay < 0 {
		delay = 0
	}
	return l.finishClaim(ctx, c, func(ctx context.Context, q *ledgerTx, item db.WorkItem, now time.Time) (db.WorkItem, error) {
		prevVersion := item.StateVersion
		attempt := db.WorkAttemptFinishParams{WorkID: item.WorkID, AttemptNo: item.AttemptCount, FinishedAt: now,
			ErrorCategory: f.Category, ErrorCode: f.Code}
		item.LeaseOwner, item.LeaseExpiresAt = "", time.Time{}
		item.ErrorCategory, item.ErrorCode = f.Category, f.Code
		item.StateVersion++
		item.UpdatedAt = now
		if f.Retryable && item.GenerationAttemptCount < item.MaxAttempts {
			item.Status = db.StatusRetryWait
			item.AvailableAt = now.Add(delay)
			attempt.Outcome = db.OutcomeRetryWait
		} else {
			item.Status = db.StatusFailed
			item.CompletedAt = now
			attempt.Outcome = db.OutcomeFailed
		}
		return item, matchedOne(q.WorkItemUpdateStateFinishAttempt(ctx, db.WorkItemUpdateStateFinishAttemptParams{
			State: db.WorkItemUpdateStateParams{Item: item, ExpectedVersion: prevVersion}, Attempt: attempt,
		}))
	})
}

// ConfirmCancelled converges a claim whose item was asked to cancel: the attempt finishes as cancelled, the key
// is deleted and the lane head advances, without waiting for the lease to expire. The domain commit never runs.
func (l *Ledger) ConfirmCancelled(ctx context.Context, c Claim) (db.WorkItem, error) {
	var out db.WorkItem
	err := l.inTx(ctx, func(ctx context.Context, q *ledgerTx) error {
		lane, hasKey, item, now, err := lockLaneKeyItem(ctx, q, c.Item.LaneKey, c.Item.LogicalKey, c.Item.WorkID)
		if err != nil {
			return err
		}
		if err := verifyClaim(item, c, now); err != ErrCancelRequested {
			if err == nil {
				return invalidArgument("no cancel was requested")
			}
			return err
		}
		out, err = cancelRunning(ctx, q, lane, hasKey, item, now)
		return err
	})
	return out, err
}

// finishClaim is the transaction of Fail and Snooze: it locks the claim's lane, key and item (lane → key → item) and
// verifies the claim, then runs write, whose item is returned once the transaction commits. A pending cancel
// request wins: the item is cancelled instead and write does not run.
func (l *Ledger) finishClaim(ctx context.Context, c Claim,
	write func(ctx context.Context, q *ledgerTx, item db.WorkItem, now time.Time) (db.WorkItem, error)) (db.WorkItem, error) {
	var out db.WorkItem
	err := l.inTx(ctx, func(ctx context.Context, q *ledgerTx) error {
		lane, hasKey, item, now, err := lockLaneKeyItem(ctx, q, c.Item.LaneKey, c.Item.LogicalKey, c.Item.WorkID)
		if err != nil {
			return err
		}
		switch err := verifyClaim(item, c, now); err {
		case nil:
			written, err := write(ctx, q, item, now)
			if err == nil {
				out = written
			}
			return err
		case ErrCancelRequested:
			out, err = cancelRunning(ctx, q, lane, hasKey, item, now)
			return err
		default:
			return err
		}
	})
	return out, err
}

func cancelRunning(ctx context.Context, q db.Queries, lane db.WorkLane, hasKey bool, item db.WorkItem, now time.Time) (db.WorkItem, error) {
	prevVersion := item.StateVersion
	item.Status = db.StatusCancelled
	item.LeaseOwner, item.LeaseExpiresAt = "", time.Time{}
	item.ErrorCategory, item.ErrorCode = ErrorCategoryCancellation, ErrorCodeCancelRequested
	item.StateVersion++
	item.UpdatedAt, item.CompletedAt = now, now
	if err := updateState(ctx, q, item, prevVersion); err != nil {
		return item, err
	}
	if _, err := q.WorkAttemptFinish(ctx, db.WorkAttemptFinishParams{
		WorkID: item.WorkID, AttemptNo: item.AttemptCount, FinishedAt: now, Outcome: db.OutcomeCancelled,
		ErrorCategory: ErrorCategoryCancellation, ErrorCode: ErrorCodeCancelRequested,
	}); err != nil {
		return item, err
	}
	return item, finishLane(ctx, q, lane, hasKey, item)
}
