package coordinator

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/powercontext/powercontext/db"
)

// Ledger is the Work Ledger protocol over one db.Store. It is safe for concurrent use; all coordination state
// lives in the database.
type Ledger struct {
	store db.Store
	hooks LedgerHooks
	watch itemWatch
	wake  wakeups // cross-process wake-ups (wakeup.go)
	// path selects the claim pass and the batch completion (docs/protocol.md#claim).
	path Path
}

// Path selects how the ledger runs a claim pass and a batch of completions (docs/protocol.md#claim). Every path
// has the same semantics; they differ in statements and round trips.
type Path int

const (
	// PathSet (the default) uses the store's set-based methods ("…Many"): on PostgreSQL a claim pass in one
	// statement, a batch's completion in one lock batch and one finishing statement, an EnqueueMany in three
	// statements; elsewhere the same methods run their per-row statements (db.Chain…).
	PathSet Path = iota
	// PathBatched claims a pass in one transaction with per-candidate SKIP LOCKED statements (db.ChainWorkItemClaimMany)
	// where the store skips locked rows (else as PathPerItem), completes a batch in one transaction with a savepoint
	// per item and enqueues a batch request by request.
	PathBatched
	// PathPerItem claims one candidate per transaction (the path OceanBase always takes) and completes a batch in
	// one transaction with a savepoint per item.
	PathPerItem
)

// NewLedger returns a Ledger over store.
func NewLedger(store db.Store) *Ledger { return &Ledger{store: store} }

// LedgerHooks observe ledger operations (metrics, traces). Every field is optional. A hook sees only bounded facts
// (the item's kind and status, the claim), never payloads, and must not call the ledger.
type LedgerHooks struct {
	// Enqueue wraps one Enqueue; it returns a context for the enqueue and a func called with its result.
	Enqueue func(ctx context.Context) (context.Context, func(EnqueueResult, error))
	// Commit wraps Complete's final transaction; it returns a context for it and a func called with its error.
	Commit func(ctx context.Context, c Claim) (context.Context, func(error))
}

// SetHooks installs hooks. Call it once, before the ledger is used.
func (l *Ledger) SetHooks(h LedgerHooks) { l.hooks = h }

// SetPath selects the claim pass, the batch completion and EnqueueMany's statements (PathSet by default). Call it before the ledger is used;
// tests and benchmarks run every path.
func (l *Ledger) SetPath(p Path) { l.path = p }

// Store returns the underlying store.
func (l *Ledger) Store() db.Store { return l.store }

// VersionRange is an inclusive range of payload versions a worker can execute for one kind.
type VersionRange struct{ Min, Max int32 }

// Supported maps kind → payload versions a worker can execute.
type Supported map[string]VersionRange

// Has reports whether (kind, version) is executable.
func (s Supported) Has(kind string, version int32) bool {
	r, ok := s[kind]
	return ok && version >= r.Min && version <= r.Max
}

// list returns the supported kinds with their version ranges.
func (s Supported) list() []db.KindVersions {
	out := make([]db.KindVersions, 0, len(s))
	for k, r := range s {
		out = append(out, db.KindVersions{Kind: k, Min: r.Min, Max: r.Max})
	}
	return out
}

// Kinds lists the supported kinds.
func (s Supported) Kinds() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	return out
}

// Claim is a worker's ownership of one running item: every later write must present it and is checked against
// (status, lease_owner, lease_fence, attempt_count, lease_expires_at) in the same transaction.
type Claim struct {
	Item           db.WorkItem // the item as claimed (status running)
	Owner          string
	Fence          int64
	AttemptNo      int32
	LeaseExpiresAt time.Time
	// TraceID/SpanID are the ids stored on this attempt's row (ClaimRequest.NewTrace; empty without it): the
	// attempt's execution span must be started with exactly these ids.
	TraceID string
	SpanID  string
	// PreviousTraceID/PreviousSpanID are the stored ids of the previous attempt's execution span, if any, so the
	// new attempt's span can link to it.
	PreviousTraceID string
	PreviousSpanID  string
}

// Get returns one item.
func (l *Ledger) Get(ctx context.Context, workID string) (db.WorkItem, error) {
	if !validWorkID(workID) {
		return db.WorkItem{}, ErrNotFound
	}
	return l.store.WorkItemGet(ctx, workID)
}

// Attempts returns the attempts of one item in attempt order.
func (l *Ledger) Attempts(ctx context.Context, workID string) ([]db.WorkAttempt, error) {
	if !validWorkID(workID) {
		return nil, ErrNotFound
	}
	return l.store.WorkAttemptListByWorkID(ctx, workID)
}

// ListParams filters List. Kinds is required (callers restrict to the kinds they may show).
type ListParams = db.WorkItemListParams

// List returns items newest first (keyset on created_at, work_id).
func (l *Ledger) List(ctx context.Context, p ListParams) ([]db.WorkItem, error) {
	if len(p.Kinds) == 0 {
		return nil, invalidArgument("list needs at least one kind")
	}
	if p.Limit <= 0 || p.Limit > 1000 {
		return nil, invalidArgument("list limit must be 1..1000")
	}
	return l.store.WorkItemList(ctx, p)
}

func validWorkID(id string) bool {
	_, err := uuid.Parse(id)
	return err == nil && len(id) == 36
}

// verifyClaim checks the claim against the locked item on database time.
func verifyClaim(item db.WorkItem, c Claim, now time.Time) error {
	if item.LeaseOwner != c.Owner || item.LeaseFence != c.Fence || item.AttemptCount != c.AttemptNo {
		return ErrStaleWorkClaim
	}
	if item.Status != db.StatusRunning && item.Status != db.StatusCancelling {
		return ErrStaleWorkClaim
	}
	if !now.Before(item.LeaseExpiresAt) {
		return ErrStaleWorkClaim
	}
	if item.Status == db.StatusCancelling || item.CancelRequested {
		return ErrCancelRequested
	}
	return nil
}

// lockLaneKeyItem takes the lane, logical key and item locks in the global order and returns the item with the
// database time read while locking it. The key may be absent for terminal items (hasKey=false).
func lockLaneKeyItem(ctx context.Context, q db.Queries, laneKey, logicalKey, workID string) (lane db.WorkLane, hasKey bool, item db.WorkItem, now time.Time, err error) {
	lane, _, err = q.WorkLaneLock(ctx, laneKey)
	if err != nil {
		return lane, false, item, now, err
	}
	_, err = q.WorkKeyLock(ctx, logicalKey)
	switch {
	case err == nil:
		hasKey = true
	case errors.Is(err, db.ErrNotFound):
	default:
		return lane, false, item, now, err
	}
	item, now, err = q.WorkItemLock(ctx, workID)
	return lane, hasKey, item, now, err
}

// lockLaneItem takes the lane and item locks, skipping the logical key (lane → item keeps the global order). It
// serves paths that neither read nor write the key, such as claiming a due lane head: every path that does touch
// the key holds the lane lock first, so the lane lock already serialises them with this one.
func lockLaneItem(ctx context.Context, q db.Queries, laneKey, workID string) (lane db.WorkLane, item db.WorkItem, now time.Time, err error) {
	return q.WorkLaneItemLock(ctx, db.WorkLaneItemLockParams{LaneKey: laneKey, WorkID: workID})
}

// lockLaneDeleteKeyItem is lockLaneKeyItem for Complete, which always deletes the key when it commits: the DELETE
// itself takes the key's row lock (in the lane → key → item order) instead of a locking read followed by a DELETE
// later in the transaction. If the claim turns out stale, the transaction rolls back and the key is restored.
func lockLaneDeleteKeyItem(ctx context.Context, q db.Queries, laneKey, logicalKey, workID string) (lane db.WorkLane, item db.WorkItem, now time.Time, err error) {
	return q.WorkLaneKeyDeleteItemLock(ctx, db.WorkLaneKeyDeleteItemLockParams{LaneKey: laneKey, LogicalKey: logicalKey, WorkID: workID})
}

// finishLane deletes the logical key of a succeeded or cancelled item and advances the lane head past it when it
// was the head (to the lowest later non-terminal sequence, or idle). Caller holds lane, key and item locks.
func finishLane(ctx context.Context, q db.Queries, lane db.WorkLane, hasKey bool, item db.WorkItem) error {
	if hasKey {
		if _, err := q.WorkKeyDelete(ctx, item.LogicalKey); err != nil {
			return err
		}
	}
	if lane.HeadSequence != item.LaneSequence {
		return nil
	}
	return q.WorkLaneAdvanceHead(ctx, db.WorkLaneAdvanceHeadParams{LaneKey: lane.LaneKey, AfterSequence: item.LaneSequence})
}

// errVersionMoved is a compare-and-set on state_version that failed under a held row lock: a protocol bug.
var errVersionMoved = errors.New("coordinator: work item state version moved under a held lock")

// matchedOne turns a guarded write's rows-matched count into errVersionMoved (which fails the transaction).
func matchedOne(n int64, err error) error {
	if err != nil {
		return err
	}
	if n != 1 {
		return errVersionMoved
	}
	return nil
}

// updateState writes item guarded by its previous state_version (always current under the held row lock; the
// guard turns any protocol bug into a loud error instead of a silent overwrite).
func updateState(ctx context.Context, q db.Queries, item db.WorkItem, prevVersion int64) error {
	n, err := q.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: item, ExpectedVersion: prevVersion})
	return matchedOne(n, err)
}
