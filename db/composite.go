package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"time"
)

// The composite steps of Queries run one statement after the other. Adapters without a cheaper way (MySQL, SQLite,
// and the PostgreSQL adapter outside a transaction) delegate to these functions, so every engine has the same
// semantics by construction (docs/protocol.md#round-trips).

// ChainWorkLaneItemLock runs WorkLaneLock then WorkItemLock.
func ChainWorkLaneItemLock(ctx context.Context, q Queries, p WorkLaneItemLockParams) (WorkLane, WorkItem, time.Time, error) {
	lane, _, err := q.WorkLaneLock(ctx, p.LaneKey)
	if err != nil {
		return lane, WorkItem{}, time.Time{}, err
	}
	item, now, err := q.WorkItemLock(ctx, p.WorkID)
	return lane, item, now, err
}

// ChainWorkLaneKeyDeleteItemLock runs WorkLaneLock, WorkKeyDelete then WorkItemLock.
func ChainWorkLaneKeyDeleteItemLock(ctx context.Context, q Queries, p WorkLaneKeyDeleteItemLockParams) (WorkLane, WorkItem, time.Time, error) {
	lane, _, err := q.WorkLaneLock(ctx, p.LaneKey)
	if err != nil {
		return lane, WorkItem{}, time.Time{}, err
	}
	if _, err := q.WorkKeyDelete(ctx, p.LogicalKey); err != nil {
		return lane, WorkItem{}, time.Time{}, err
	}
	item, now, err := q.WorkItemLock(ctx, p.WorkID)
	return lane, item, now, err
}

// ChainWorkItemUpdateStateInsertAttempt runs WorkItemUpdateState and, when it matched one row, WorkAttemptInsert.
func ChainWorkItemUpdateStateInsertAttempt(ctx context.Context, q Queries, p WorkItemUpdateStateInsertAttemptParams) (int64, error) {
	n, err := q.WorkItemUpdateState(ctx, p.State)
	if err != nil || n != 1 {
		return n, err
	}
	return n, q.WorkAttemptInsert(ctx, p.Attempt)
}

// ChainWorkItemUpdateStateFinishAttempt runs WorkItemUpdateState and, when it matched one row, WorkAttemptFinish and
// the optional WorkLaneAdvanceHead.
func ChainWorkItemUpdateStateFinishAttempt(ctx context.Context, q Queries, p WorkItemUpdateStateFinishAttemptParams) (int64, error) {
	n, err := q.WorkItemUpdateState(ctx, p.State)
	if err != nil || n != 1 {
		return n, err
	}
	if _, err := q.WorkAttemptFinish(ctx, p.Attempt); err != nil {
		return n, err
	}
	if p.AdvanceHead != nil {
		if err := q.WorkLaneAdvanceHead(ctx, *p.AdvanceHead); err != nil {
			return n, err
		}
	}
	return n, nil
}

// ChainWorkKeyItemInsert runs WorkKeyInsertIfAbsent and, when it inserted, WorkLaneUpdate and WorkItemInsert.
func ChainWorkKeyItemInsert(ctx context.Context, q Queries, p WorkKeyItemInsertParams) (bool, error) {
	inserted, err := q.WorkKeyInsertIfAbsent(ctx, p.Key)
	if err != nil || !inserted {
		return inserted, err
	}
	if err := q.WorkLaneUpdate(ctx, p.Lane); err != nil {
		return true, err
	}
	return true, q.WorkItemInsert(ctx, p.Item)
}

// ChainWorkKeyItemInsertAtCommit runs WorkKeyItemInsert now and sets *inserted.
func ChainWorkKeyItemInsertAtCommit(ctx context.Context, q Queries, p WorkKeyItemInsertParams, inserted *bool) error {
	ok, err := q.WorkKeyItemInsert(ctx, p)
	*inserted = ok
	return err
}

// ChainMemoryEntryInsertMany runs MemoryEntryInsert for every entry.
func ChainMemoryEntryInsertMany(ctx context.Context, q Queries, es []MemoryEntry) error {
	for _, e := range es {
		if err := q.MemoryEntryInsert(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// ChainMemoryEmbeddingUpsertMany runs MemoryEmbeddingUpsert for every row.
func ChainMemoryEmbeddingUpsertMany(ctx context.Context, q Queries, es []MemoryEmbedding) error {
	for _, e := range es {
		if err := q.MemoryEmbeddingUpsert(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// ErrNoTransaction is Savepoint called outside InTx.
var ErrNoTransaction = errors.New("db: savepoint outside a transaction")

// ErrAtCommitTwice is a second WorkKeyItemInsertAtCommit in one transaction on MySQL mode, whose COMMIT carries one
// deferred enqueue: running the second at once would write it before the first, so it is refused instead
// (PostgreSQL queues both in order; SQLite runs each at once).
var ErrAtCommitTwice = errors.New("db: a second WorkKeyItemInsertAtCommit in one transaction")

// ErrAtCommitShort is a write that must match every row it names, as the transaction's last, which matched fewer
// (WorkItemSucceedManyAtCommit): the transaction is not committed.
var ErrAtCommitShort = errors.New("db: a write at the COMMIT matched fewer rows than it must")

// The savepoint statements (one name: savepoints do not nest).
const (
	SavepointSQL         = "SAVEPOINT pc_item"
	RollbackSavepointSQL = "ROLLBACK TO SAVEPOINT pc_item"
	ReleaseSavepointSQL  = "RELEASE SAVEPOINT pc_item"
)

// ChainSavepoint is Savepoint over an executor of the transaction: SAVEPOINT, fn, then RELEASE, or on fn's error
// ROLLBACK TO and RELEASE.
func ChainSavepoint(ctx context.Context, exec func(ctx context.Context, stmt string) error, q Queries, fn func(ctx context.Context, q Queries) error) (fnErr error, err error) {
	if err := exec(ctx, SavepointSQL); err != nil {
		return nil, err
	}
	if fnErr = fn(ctx, q); fnErr != nil {
		if err := exec(ctx, RollbackSavepointSQL); err != nil {
			return fnErr, err
		}
	}
	return fnErr, exec(ctx, ReleaseSavepointSQL)
}

// SQLExec is ChainSavepoint's executor over a database/sql connection or transaction (MySQL, SQLite), its errors
// interpreted by interpret.
func SQLExec(c interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}, interpret func(error) error) func(ctx context.Context, stmt string) error {
	return func(ctx context.Context, stmt string) error {
		_, err := c.ExecContext(ctx, stmt)
		return interpret(err)
	}
}

// InTxWorkItemClaimMany is a Store's WorkItemClaimMany on the engines whose claim pass is several statements (MySQL,
// SQLite): the pass runs in a transaction of its own (inTx, the Store's InTx), so its locks last until its claims
// are written.
func InTxWorkItemClaimMany(ctx context.Context, inTx func(ctx context.Context, fn func(ctx context.Context, q Queries) error) error, p WorkItemClaimManyParams) (res WorkItemClaimManyResult, err error) {
	err = inTx(ctx, func(ctx context.Context, q Queries) error {
		res, err = q.WorkItemClaimMany(ctx, p)
		return err
	})
	return res, err
}

// The set-based methods ("…Many": one statement over a set on PostgreSQL) run their per-row statements in order on
// the engines without a set statement. Each chain keeps the set statement's semantics (what it locks, in which
// order, what it writes and returns); the conformance suite holds both to the same cases.

// ChainWorkItemClaimMany is one claim pass over the per-row statements, inside the caller's transaction: the
// candidate query, the database clock, then the due supported heads (the oldest first, the rest spread: Due), in
// rounds of as many candidates as slots are left, the whole pass in ascending lane_key order (Round), each locked
// lane → item without waiting (WorkLaneItemLockSkipLocked; a row another transaction holds is skipped), re-checked
// and claimed (WorkItemUpdateStateInsertAttempt). Expired heads are reported, not recovered.
func ChainWorkItemClaimMany(ctx context.Context, q Queries, p WorkItemClaimManyParams) (WorkItemClaimManyResult, error) {
	cands, err := q.WorkItemClaimCandidates(ctx, WorkItemClaimCandidatesParams{Kinds: p.Kinds(), Limit: p.Candidates})
	if err != nil {
		return WorkItemClaimManyResult{}, err
	}
	now, err := q.DBNow(ctx)
	if err != nil {
		return WorkItemClaimManyResult{}, err
	}
	res := WorkItemClaimManyResult{Now: now}
	var due []ClaimCandidate
	res.Expired, due = p.Due(cands)
	slots := int(p.Slots)
	for rest := due; len(res.Claimed) < slots; {
		var round []ClaimCandidate
		if round, rest = Round(rest, slots-len(res.Claimed)); len(round) == 0 {
			break
		}
		for _, c := range round {
			lane, item, _, err := q.WorkLaneItemLockSkipLocked(ctx, WorkLaneItemLockParams{LaneKey: c.LaneKey, WorkID: c.WorkID})
			if errors.Is(err, ErrNotFound) {
				continue // held by another transaction, purged or never committed
			}
			if err != nil {
				return WorkItemClaimManyResult{}, err
			}
			if lane.HeadSequence != item.LaneSequence || (item.Status != StatusQueued && item.Status != StatusRetryWait) ||
				item.AvailableAt.After(now) || !p.Supports(item.Kind, item.PayloadVersion) {
				continue
			}
			claimed, err := chainClaim(ctx, q, item, now, p, int32(len(res.Claimed)+1))
			if err != nil {
				return WorkItemClaimManyResult{}, err
			}
			res.Claimed = append(res.Claimed, claimed)
		}
	}
	return res, nil
}

// Round takes a claim pass's next round from rest (what Due returned, then what the previous Round left): up to n
// candidates in rest's order, sorted by lane_key, and the candidates left for later rounds, only those of lanes above
// the round's last. Across its rounds a pass so tries lanes in ascending lane_key order, the global lock order
// (docs/protocol.md#lock-order), even though it holds the lanes of earlier rounds: its SKIP LOCKED reads should
// never wait, but if an engine's ever did, the pass still could not close a cycle with a batch, which locks its
// lanes in that order too.
func Round(rest []ClaimCandidate, n int) (round, left []ClaimCandidate) {
	round = slices.Clone(rest[:min(len(rest), n)])
	if len(round) == 0 {
		return nil, nil
	}
	sort.Slice(round, func(a, b int) bool { return round[a].LaneKey < round[b].LaneKey })
	last := round[len(round)-1].LaneKey
	for _, c := range rest[len(round):] {
		if c.LaneKey > last {
			left = append(left, c)
		}
	}
	return round, left
}

// Kinds are the supported kinds: the candidate query's filter.
func (p WorkItemClaimManyParams) Kinds() []string {
	kinds := make([]string, len(p.Supported))
	for i, s := range p.Supported {
		kinds[i] = s.Kind
	}
	return kinds
}

// Supports reports whether the pass claims items of kind at payload version.
func (p WorkItemClaimManyParams) Supports(kind string, version int32) bool {
	for _, s := range p.Supported {
		if s.Kind == kind && version >= s.Min && version <= s.Max {
			return true
		}
	}
	return false
}

// Due splits a pass's candidates: the expired heads in their order (running or cancelling: reported, not
// recovered) and the heads of a supported kind and version, to be locked and re-checked in rounds of the slots
// left. The oldest due head comes first, so every pass tries it; the others come in random order, so that workers
// reading the same candidates at the same time try different heads rather than all locking the oldest few, where
// every worker but one finds them held or already claimed and spends a round trip on nothing
// (docs/protocol.md#set-based-steps-in-mysql-mode).
func (p WorkItemClaimManyParams) Due(cands []ClaimCandidate) (expired, due []ClaimCandidate) {
	for _, c := range cands {
		switch {
		case c.Status == StatusRunning || c.Status == StatusCancelling:
			expired = append(expired, c)
		case p.Supports(c.Kind, c.PayloadVersion):
			due = append(due, c)
		}
	}
	if len(due) > 2 {
		rest := due[1:]
		rand.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	}
	return expired, due
}

// Claim is item as the pass's claim at now writes it: running, leased to the owner for the lease under the next
// fence, one attempt more, a new state version.
func (p WorkItemClaimManyParams) Claim(item WorkItem, now time.Time) WorkItem {
	item.Status = StatusRunning
	item.LeaseOwner = p.Owner
	item.LeaseFence++
	item.LeaseExpiresAt = now.Add(p.Lease)
	item.AttemptCount++
	item.GenerationAttemptCount++
	item.StateVersion++
	item.UpdatedAt = now
	return item
}

// chainClaim claims one locked, re-checked head as WorkItemClaimMany does, with the trace ids of slot.
func chainClaim(ctx context.Context, q Queries, item WorkItem, now time.Time, p WorkItemClaimManyParams, slot int32) (ClaimedItem, error) {
	var out ClaimedItem
	if item.AttemptCount > 0 {
		prev, err := q.WorkAttemptGet(ctx, WorkAttemptGetParams{WorkID: item.WorkID, AttemptNo: item.AttemptCount})
		if err != nil && !errors.Is(err, ErrNotFound) {
			return out, err
		}
		out.PreviousTraceID, out.PreviousSpanID = prev.TraceID, prev.SpanID
	}
	prevVersion := item.StateVersion
	item = p.Claim(item, now)
	attempt := WorkAttempt{WorkID: item.WorkID, AttemptNo: item.AttemptCount, RecoveryGeneration: item.RecoveryGeneration,
		OwnerID: p.Owner, Fence: item.LeaseFence, StartedAt: now}
	if int(slot) <= len(p.TraceIDs) {
		out.Slot = slot
		attempt.TraceID, attempt.SpanID = p.TraceIDs[slot-1], p.SpanIDs[slot-1]
	}
	n, err := q.WorkItemUpdateStateInsertAttempt(ctx, WorkItemUpdateStateInsertAttemptParams{
		State: WorkItemUpdateStateParams{Item: item, ExpectedVersion: prevVersion}, Attempt: attempt})
	if err != nil {
		return out, err
	}
	if n != 1 {
		return out, fmt.Errorf("db: claim of %s matched %d rows under held locks", item.WorkID, n)
	}
	out.Item = item
	return out, nil
}

// ChainWorkLaneKeyItemLockMany locks the lanes of refs (ascending lane_key), then their logical keys (ascending),
// then their items (ascending work_id) — the lock order across the whole batch — waiting for each, and reads the
// clock once all are held.
func ChainWorkLaneKeyItemLockMany(ctx context.Context, q Queries, refs []WorkItemRef) ([]LockedItem, time.Time, error) {
	laneKeys, logicalKeys, workIDs := RefKeys(refs)
	lanes := map[string]WorkLane{}
	for _, k := range SortedSet(laneKeys) {
		lane, _, err := q.WorkLaneLock(ctx, k)
		if err = found(err); err != nil {
			return nil, time.Time{}, err
		}
		if lane.LaneKey != "" {
			lanes[k] = lane
		}
	}
	keys := map[string]bool{}
	for _, k := range SortedSet(logicalKeys) {
		key, err := q.WorkKeyLock(ctx, k)
		if err = found(err); err != nil {
			return nil, time.Time{}, err
		}
		keys[k] = key.LogicalKey != ""
	}
	items := map[string]WorkItem{}
	for _, id := range SortedSet(workIDs) {
		item, _, err := q.WorkItemLock(ctx, id)
		if err = found(err); err != nil {
			return nil, time.Time{}, err
		}
		if item.WorkID != "" {
			items[id] = item
		}
	}
	now, err := q.DBNow(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	return LockedItems(refs, lanes, keys, items), now, nil
}

// RefKeys lists the lane keys, logical keys and work ids of refs, in refs' order.
func RefKeys(refs []WorkItemRef) (laneKeys, logicalKeys, workIDs []string) {
	laneKeys, logicalKeys, workIDs = make([]string, len(refs)), make([]string, len(refs)), make([]string, len(refs))
	for i, r := range refs {
		laneKeys[i], logicalKeys[i], workIDs[i] = r.LaneKey, r.LogicalKey, r.WorkID
	}
	return laneKeys, logicalKeys, workIDs
}

// LockedItems is WorkLaneKeyItemLockMany's answer for refs from what the batch's locks found: the lanes by lane key,
// whether each logical key exists, the items by work id.
func LockedItems(refs []WorkItemRef, lanes map[string]WorkLane, keys map[string]bool, items map[string]WorkItem) []LockedItem {
	out := make([]LockedItem, len(refs))
	for i, r := range refs {
		lane, laneOK := lanes[r.LaneKey]
		item, itemOK := items[r.WorkID]
		out[i] = LockedItem{Found: laneOK && itemOK, Lane: lane, HasKey: keys[r.LogicalKey], Item: item}
	}
	return out
}

// ChainWorkItemSucceedManyAtCommit runs WorkItemSucceedMany now and fails unless it finished every item.
func ChainWorkItemSucceedManyAtCommit(ctx context.Context, q Queries, p WorkItemSucceedManyParams) error {
	n, err := q.WorkItemSucceedMany(ctx, p)
	if err == nil && n != int64(len(p.Items)) {
		err = fmt.Errorf("%w: finished %d of %d items", ErrAtCommitShort, n, len(p.Items))
	}
	return err
}

// ChainWorkItemSucceedMany finishes each item whose state_version is the expected one as succeeded at p.Now
// (WorkItemUpdateStateFinishAttempt, advancing the head where the item is its lane's head, then WorkKeyDelete). The
// caller holds lane, key and item locks. It returns the number of items finished.
func ChainWorkItemSucceedMany(ctx context.Context, q Queries, p WorkItemSucceedManyParams) (int64, error) {
	var n int64
	for _, s := range p.Items {
		item, err := q.WorkItemGet(ctx, s.WorkID)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return n, err
		}
		if item.StateVersion != s.ExpectedVersion {
			continue
		}
		lane, err := q.WorkLaneGet(ctx, item.LaneKey)
		if err != nil {
			return n, err
		}
		item.Status = StatusSucceeded
		item.LeaseOwner, item.LeaseExpiresAt = "", time.Time{}
		item.ResultCode, item.ResultPayload = s.ResultCode, s.ResultPayload
		item.ErrorCategory, item.ErrorCode = "", ""
		item.StateVersion++
		item.UpdatedAt, item.CompletedAt = p.Now, p.Now
		fp := WorkItemUpdateStateFinishAttemptParams{
			State:   WorkItemUpdateStateParams{Item: item, ExpectedVersion: s.ExpectedVersion},
			Attempt: WorkAttemptFinishParams{WorkID: item.WorkID, AttemptNo: item.AttemptCount, FinishedAt: p.Now, Outcome: OutcomeSucceeded},
		}
		if lane.HeadSequence == item.LaneSequence {
			fp.AdvanceHead = &WorkLaneAdvanceHeadParams{LaneKey: lane.LaneKey, AfterSequence: item.LaneSequence}
		}
		m, err := q.WorkItemUpdateStateFinishAttempt(ctx, fp)
		if err != nil {
			return n, err
		}
		if m != 1 {
			continue
		}
		if _, err := q.WorkKeyDelete(ctx, item.LogicalKey); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// ChainWorkLaneLockMany locks the lanes (ascending lane_key, waiting for each) and returns those that exist, with
// the clock read after the locks.
func ChainWorkLaneLockMany(ctx context.Context, q Queries, laneKeys []string) ([]WorkLane, time.Time, error) {
	lanes := []WorkLane{}
	for _, k := range SortedSet(laneKeys) {
		lane, _, err := q.WorkLaneLock(ctx, k)
		if err = found(err); err != nil {
			return nil, time.Time{}, err
		}
		if lane.LaneKey != "" {
			lanes = append(lanes, lane)
		}
	}
	now, err := q.DBNow(ctx)
	return lanes, now, err
}

// ChainWorkKeyInsertMany runs WorkKeyInsertIfAbsent for every key, in order, and returns the work ids of the keys it
// inserted.
func ChainWorkKeyInsertMany(ctx context.Context, q Queries, keys []WorkKey) ([]string, error) {
	ids := []string{}
	for _, k := range keys {
		inserted, err := q.WorkKeyInsertIfAbsent(ctx, k)
		if err != nil {
			return nil, err
		}
		if inserted {
			ids = append(ids, k.WorkID)
		}
	}
	return ids, nil
}

// ChainWorkItemEnqueueMany runs WorkLaneUpdate for every lane and WorkItemInsert for every item, refusing an item
// not as an enqueue creates it (IsEnqueued) before it writes anything. It returns the lanes updated and the items
// inserted.
func ChainWorkItemEnqueueMany(ctx context.Context, q Queries, now time.Time, lanes []WorkLane, items []WorkItem) (int64, int64, error) {
	for _, l := range lanes {
		if l.HeadSequence == 0 {
			return 0, 0, fmt.Errorf("db: WorkItemEnqueueMany: lane %s without a head", l.LaneKey)
		}
	}
	for _, it := range items {
		if !IsEnqueued(it, now) {
			return 0, 0, fmt.Errorf("db: WorkItemEnqueueMany: item %s is not as an enqueue creates it", it.WorkID)
		}
	}
	var nl, ni int64
	for _, l := range lanes {
		err := q.WorkLaneUpdate(ctx, l)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nl, ni, err
		}
		nl++
	}
	for _, it := range items {
		if err := q.WorkItemInsert(ctx, it); err != nil {
			return nl, ni, err
		}
		ni++
	}
	return nl, ni, nil
}

// IsEnqueued reports whether it is an item exactly as an enqueue creates it at now: queued, available, created and
// updated at now, no lease, no attempt, no result, state_version 1, a payload.
func IsEnqueued(it WorkItem, now time.Time) bool {
	created := WorkItem{
		WorkID: it.WorkID, LogicalKey: it.LogicalKey, LaneKey: it.LaneKey, LaneSequence: it.LaneSequence, Kind: it.Kind,
		PayloadVersion: it.PayloadVersion, ScopeID: it.ScopeID, Payload: it.Payload, MaxAttempts: it.MaxAttempts,
		Status: StatusQueued, AvailableAt: now, StateVersion: 1, CreatedAt: now, UpdatedAt: now,
	}
	return it.Payload != nil && reflect.DeepEqual(it, created)
}

// found turns ErrNotFound into nil (the chains skip missing rows; the caller sees a zero row).
func found(err error) error {
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// SortedSet returns the distinct values of s in ascending order (the lock order of a set of keys).
func SortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
