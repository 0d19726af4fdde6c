package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/powercontext/powercontext/db"
)

// EnqueueSpec describes one logical work window. It is computed under the lane lock (SpecFunc).
type EnqueueSpec struct {
	Kind           string
	PayloadVersion int32
	ScopeID        string
	LogicalKey     string // 64 hex
	Payload        any    // JSON object (raw bytes or a value); canonicalised, at most 16 KiB
	MaxAttempts    int32
}

// SpecFunc computes the window under the lane lock (docs/protocol.md#enqueue): it may read the domain cursor and journal
// head through q, and write domain rows that must commit with the window (a Forget's tombstone), locking only what
// sits below the lane in the lock order. It may run more than once (the enqueue goes round when the lane row is
// missing or the key turned out to exist), so such writes must be idempotent. It returns nil when there is no window
// (idle; its writes still commit). It must not call the Store outside q.
type SpecFunc func(ctx context.Context, q db.Queries) (*EnqueueSpec, error)

// EnqueueRequest is one enqueue.
type EnqueueRequest struct {
	LaneKey string
	Spec    SpecFunc
	// Lease, when set, is asserted first in the same transaction (scheduler enqueues, docs/protocol.md#scheduler).
	Lease *LeaseToken
}

// WithWrites returns req whose spec first runs writes, then req's own spec: domain writes that must commit with the
// window, in the same transaction, under the lane lock (SpecFunc says what they may lock, and that they must be
// idempotent).
func (req EnqueueRequest) WithWrites(writes func(ctx context.Context, q db.Queries) error) EnqueueRequest {
	spec := req.Spec
	req.Spec = func(ctx context.Context, q db.Queries) (*EnqueueSpec, error) {
		if err := writes(ctx, q); err != nil {
			return nil, err
		}
		return spec(ctx, q)
	}
	return req
}

// EnqueueResult is the item the window maps to. Idle means no window existed and nothing was written.
type EnqueueResult struct {
	Item    db.WorkItem
	Created bool
	Idle    bool
}

var errLaneMissing = errors.New("coordinator: lane row missing")

// laneCreateAttempts bounds how often an enqueue finds its lane missing (a lane is deleted only when a scope erase
// finds it idle, and the erase then finishes, so a second miss in a row is already rare).
const laneCreateAttempts = 4

// Enqueue creates the window's work item or joins the existing one, in one short transaction that locks
// (scheduler lease →) lane → logical key. A missing lane row is created by an autocommitted insert-if-absent
// outside the transaction and the transaction is run again (docs/protocol.md#creating-rows).
func (l *Ledger) Enqueue(ctx context.Context, req EnqueueRequest) (res EnqueueResult, err error) {
	if l.hooks.Enqueue != nil {
		var end func(EnqueueResult, error)
		ctx, end = l.hooks.Enqueue(ctx)
		defer func() { end(res, err) }()
	}
	return l.enqueue(ctx, req)
}

func (l *Ledger) enqueue(ctx context.Context, req EnqueueRequest) (EnqueueResult, error) {
	if !isHex64(req.LaneKey) {
		return EnqueueResult{}, invalidArgument("lane key must be 64 lowercase hex characters")
	}
	// A scope erase may delete an idle lane between the insert and the lock: each time, create it again.
	for range laneCreateAttempts {
		res, err := l.enqueueTx(ctx, req, true)
		if !errors.Is(err, errLaneMissing) {
			return res, err
		}
		if err := l.createLane(ctx, req.LaneKey); err != nil {
			return EnqueueResult{}, err
		}
	}
	return EnqueueResult{}, errors.New("coordinator: lane row vanished after creation")
}

// enqueueTx runs one enqueue transaction. With atCommit the key, lane and item writes go as the transaction's last
// statement (WorkKeyItemInsertAtCommit: in the COMMIT's round trip on PostgreSQL), so creating an item costs two
// round trips; when the key turned out to exist, that transaction wrote nothing, and the enqueue runs again without
// atCommit to join it under the lane lock.
func (l *Ledger) enqueueTx(ctx context.Context, req EnqueueRequest, atCommit bool) (EnqueueResult, error) {
	var res EnqueueResult
	inserted := true
	err := l.inTx(ctx, func(ctx context.Context, q *ledgerTx) error {
		if req.Lease != nil {
			if err := assertLease(ctx, q, *req.Lease); err != nil {
				return err
			}
		}
		var err error
		if atCommit {
			res, err = enqueueInAtCommit(ctx, q, req, &inserted)
		} else {
			res, err = enqueueIn(ctx, q, req)
		}
		return err
	})
	if err == nil && res.Created && !inserted {
		return l.enqueueTx(ctx, req, false)
	}
	return res, err
}

// createLane creates a lane row autocommitted (docs/protocol.md#creating-rows).
func (l *Ledger) createLane(ctx context.Context, laneKey string) error {
	return CreateRow(ctx, func(ctx context.Context) (bool, error) { return l.store.WorkLaneInsertIfAbsent(ctx, laneKey) })
}

// enqueueIn is one enqueue inside the caller's transaction (the lease, if any, already asserted): lane lock, the
// window, then the key (joined) or key + lane position + item (created).
func enqueueIn(ctx context.Context, q db.Queries, req EnqueueRequest) (EnqueueResult, error) {
	var res EnqueueResult
	p, spec, idle, err := enqueueWrites(ctx, q, req)
	if err != nil || idle {
		res.Idle = idle
		return res, err
	}
	inserted, err := q.WorkKeyItemInsert(ctx, p)
	if err != nil {
		return res, err
	}
	if !inserted {
		return res, joinExisting(ctx, q, req.LaneKey, spec, &res)
	}
	res.Item, res.Created = p.Item, true
	return res, nil
}

// enqueueInAtCommit is enqueueIn whose writes run with the COMMIT where the store defers them: it then reports the
// item as created, and *inserted (true on entry) says, once the transaction has committed, whether it was (false: the
// key existed and nothing was written). A store that ran the writes at once has set *inserted already, and an
// existing key is joined here, as enqueueIn does.
func enqueueInAtCommit(ctx context.Context, q db.Queries, req EnqueueRequest, inserted *bool) (EnqueueResult, error) {
	var res EnqueueResult
	p, spec, idle, err := enqueueWrites(ctx, q, req)
	if err != nil || idle {
		res.Idle = idle
		return res, err
	}
	if err := q.WorkKeyItemInsertAtCommit(ctx, p, inserted); err != nil {
		return res, err
	}
	if !*inserted { // ran at once and found the key
		*inserted = true // nothing left to learn after the commit
		return res, joinExisting(ctx, q, req.LaneKey, spec, &res)
	}
	res.Item, res.Created = p.Item, true
	return res, nil
}

// enqueueWrites locks the lane, computes the window and returns the writes that create its item (idle: no window).
func enqueueWrites(ctx context.Context, q db.Queries, req EnqueueRequest) (db.WorkKeyItemInsertParams, *EnqueueSpec, bool, error) {
	lane, now, err := q.WorkLaneLock(ctx, req.LaneKey)
	// Missing, or deadlocked behind inserts racing to re-create a lane a scope erase just deleted (InnoDB rolls the
	// whole transaction back, and every lock before this one is a lease or a lower lane): go round
	// (docs/protocol.md#creating-rows).
	if errors.Is(err, db.ErrNotFound) || errors.Is(err, db.ErrDeadlock) {
		return db.WorkKeyItemInsertParams{}, nil, false, laneMissing{laneKey: req.LaneKey}
	}
	if err != nil {
		return db.WorkKeyItemInsertParams{}, nil, false, err
	}
	spec, err := req.Spec(ctx, q)
	if err != nil {
		return db.WorkKeyItemInsertParams{}, nil, false, err
	}
	if spec == nil {
		return db.WorkKeyItemInsertParams{}, nil, true, nil
	}
	item, err := windowItem(req.LaneKey, spec, now)
	if err != nil {
		return db.WorkKeyItemInsertParams{}, nil, false, err
	}

	// Create the key, the lane position and the item in one step; an existing key is joined instead (nothing
	// was written). Losing the key to another lane is an identity mismatch (joinExisting refuses it).
	takePosition(&lane, &item)
	return db.WorkKeyItemInsertParams{Key: windowKey(item), Lane: lane, Item: item}, spec, false, nil
}

// takePosition gives item the lane's next position and advances the lane's allocator; on an idle lane the item
// becomes the head.
func takePosition(lane *db.WorkLane, item *db.WorkItem) {
	item.LaneSequence = lane.NextSequence
	lane.NextSequence++
	if lane.HeadSequence == 0 {
		lane.HeadSequence = item.LaneSequence
	}
}

// windowItem validates spec and returns the item that creates its window on laneKey at now (queued, due at once),
// without its lane position.
func windowItem(laneKey string, spec *EnqueueSpec, now time.Time) (db.WorkItem, error) {
	if err := validateSpec(spec); err != nil {
		return db.WorkItem{}, err
	}
	payload, err := CanonicalJSON(spec.Payload)
	if err != nil {
		return db.WorkItem{}, err
	}
	return db.WorkItem{
		WorkID:         uuid.NewString(),
		LogicalKey:     spec.LogicalKey,
		LaneKey:        laneKey,
		Kind:           spec.Kind,
		PayloadVersion: spec.PayloadVersion,
		ScopeID:        spec.ScopeID,
		Payload:        payload,
		Status:         db.StatusQueued,
		AvailableAt:    now,
		MaxAttempts:    spec.MaxAttempts,
		StateVersion:   1,
		CreatedAt:      now,
		UpdatedAt:      now,
	}, nil
}

// windowKey is the logical key row of a window's new item.
func windowKey(item db.WorkItem) db.WorkKey {
	return db.WorkKey{LogicalKey: item.LogicalKey, WorkID: item.WorkID, LaneKey: item.LaneKey, CreatedAt: item.CreatedAt}
}

// laneMissing is errLaneMissing naming the lane (the lowest missing one) and, from the set path, every missing lane
// of the batch.
type laneMissing struct {
	laneKey string
	all     []string
}

func (laneMissing) Error() string { return errLaneMissing.Error() }

func (laneMissing) Unwrap() error { return errLaneMissing }

// EnqueueMany runs many enqueues in one transaction (docs/protocol.md#enqueue-many): every distinct scheduler lease
// of the requests is asserted first, then the requests run in ascending lane_key order (stable for one lane, so a
// lane's windows keep the callers' order), each as Enqueue would: lane lock, window, key joined or key + item
// created. Results are in the order of reqs. Lanes that do not exist yet are created autocommitted and the
// transaction runs again, as for Enqueue. Any error rolls the whole batch back. On a store with set-based enqueue
// statements (PathSet) the same transaction takes three statements plus two per join (enqueueManySet).
func (l *Ledger) EnqueueMany(ctx context.Context, reqs []EnqueueRequest) (results []EnqueueResult, err error) {
	for _, r := range reqs {
		if !isHex64(r.LaneKey) {
			return nil, invalidArgument("lane key must be 64 lowercase hex characters")
		}
	}
	if len(reqs) == 0 {
		return nil, nil
	}
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return reqs[order[a]].LaneKey < reqs[order[b]].LaneKey })
	var leases []LeaseToken
	for _, r := range reqs {
		if r.Lease != nil && !slices.Contains(leases, *r.Lease) {
			leases = append(leases, *r.Lease)
		}
	}
	ends := make([]func(EnqueueResult, error), len(reqs))
	if l.hooks.Enqueue != nil {
		for i := range reqs {
			_, ends[i] = l.hooks.Enqueue(ctx)
		}
		defer func() {
			for i, end := range ends {
				var r EnqueueResult
				if err == nil {
					r = results[i]
				}
				end(r, err)
			}
		}()
	}
	// Each retry follows the creation of at least the missing lane, and of every later lane of the batch once a
	// second lane turned out missing, so a batch of new lanes costs at most three transactions. The set path locks
	// every lane at once and names all the missing ones: only those are created, and one retry suffices.
	for attempt := 0; attempt < 3; attempt++ {
		results = make([]EnqueueResult, len(reqs))
		err = l.inTx(ctx, func(ctx context.Context, q *ledgerTx) error {
			for _, t := range leases {
				if err := assertLease(ctx, q, t); err != nil {
					return err
				}
			}
			if l.path == PathSet {
				if err := enqueueManySet(ctx, q, reqs, order, results); err != nil {
					return err
				}
			} else {
				for _, i := range order {
					r, err := enqueueIn(ctx, q, reqs[i])
					if err != nil {
						return err
					}
					results[i] = r
				}
			}
			return nil
		})
		var missing laneMissing
		if !errors.As(err, &missing) {
			return results, err
		}
		create := []string{missing.laneKey}
		if len(missing.all) > 0 {
			create = missing.all
		} else if attempt > 0 {
			create = create[:0]
			for _, i := range order {
				if reqs[i].LaneKey >= missing.laneKey {
					create = append(create, reqs[i].LaneKey)
				}
			}
		}
		for _, lk := range slices.Compact(create) {
			if err := l.createLane(ctx, lk); err != nil {
				return nil, err
			}
		}
	}
	return nil, errors.New("coordinator: lane rows vanished after creation")
}

// enqueueManySet is EnqueueMany's transaction with the set-based methods (docs/protocol.md#enqueue-many):
// every lane locked in one statement (ascending lane_key), each window computed under the locks in the order of the
// sequential path, the new keys inserted in one statement, positions allocated (in that order) only to the windows
// whose key was inserted, lanes and items written in one statement, and the windows whose key existed joined
// afterwards as Enqueue joins them. It fills results (indexed as reqs).
func enqueueManySet(ctx context.Context, q db.Queries, reqs []EnqueueRequest, order []int, results []EnqueueResult) error {
	laneKeys := make([]string, 0, len(order))
	for _, i := range order {
		if n := len(laneKeys); n == 0 || laneKeys[n-1] != reqs[i].LaneKey {
			laneKeys = append(laneKeys, reqs[i].LaneKey)
		}
	}
	locked, now, err := q.WorkLaneLockMany(ctx, laneKeys)
	if err != nil {
		return err
	}
	lanes := make(map[string]db.WorkLane, len(locked))
	for _, lane := range locked {
		lanes[lane.LaneKey] = lane
	}
	var missing []string
	for _, lk := range laneKeys { // ascending: the lowest missing lane first, as the sequential path would find it
		if _, ok := lanes[lk]; !ok {
			missing = append(missing, lk)
		}
	}
	if len(missing) > 0 {
		return laneMissing{laneKey: missing[0], all: missing}
	}
	type window struct {
		i    int
		spec *EnqueueSpec
		item db.WorkItem
	}
	windows := make([]window, 0, len(order))
	keys := make([]db.WorkKey, 0, len(order))
	for _, i := range order {
		spec, err := reqs[i].Spec(ctx, q)
		if err != nil {
			return err
		}
		if spec == nil {
			results[i] = EnqueueResult{Idle: true}
			continue
		}
		item, err := windowItem(reqs[i].LaneKey, spec, now)
		if err != nil {
			return err
		}
		windows = append(windows, window{i: i, spec: spec, item: item})
		keys = append(keys, windowKey(item))
	}
	if len(windows) == 0 {
		return nil
	}
	ids, err := q.WorkKeyInsertMany(ctx, keys)
	if err != nil {
		return err
	}
	inserted := make(map[string]bool, len(ids))
	for _, id := range ids {
		inserted[id] = true
	}
	var (
		items   []db.WorkItem
		changed []string // lanes given a position, ascending
		joins   []window
	)
	for _, w := range windows {
		if !inserted[w.item.WorkID] {
			joins = append(joins, w)
			continue
		}
		lane := lanes[w.item.LaneKey]
		takePosition(&lane, &w.item)
		if n := len(changed); n == 0 || changed[n-1] != lane.LaneKey {
			changed = append(changed, lane.LaneKey)
		}
		lanes[lane.LaneKey] = lane
		items = append(items, w.item)
		results[w.i] = EnqueueResult{Item: w.item, Created: true}
	}
	if len(items) > 0 {
		laneRows := make([]db.WorkLane, len(changed))
		for j, lk := range changed {
			laneRows[j] = lanes[lk]
		}
		nl, ni, err := q.WorkItemEnqueueMany(ctx, now, laneRows, items)
		if err != nil {
			return err
		}
		if nl != int64(len(laneRows)) || ni != int64(len(items)) {
			return fmt.Errorf("coordinator: set enqueue wrote %d of %d lanes and %d of %d items under held locks", nl, len(laneRows), ni, len(items))
		}
	}
	for _, w := range joins {
		var res EnqueueResult
		if err := joinExisting(ctx, q, w.item.LaneKey, w.spec, &res); err != nil {
			return err
		}
		results[w.i] = res
	}
	return nil
}

// joinExisting locks the window's existing key (under the lane lock) and returns its item as the result, after
// checking it is the same window (ErrKeyIdentityMismatch otherwise).
func joinExisting(ctx context.Context, q db.Queries, laneKey string, spec *EnqueueSpec, res *EnqueueResult) error {
	key, err := q.WorkKeyLock(ctx, spec.LogicalKey)
	if err != nil {
		return err
	}
	item, err := q.WorkItemGet(ctx, key.WorkID)
	if err != nil {
		return err
	}
	if item.Kind != spec.Kind || item.ScopeID != spec.ScopeID || item.LaneKey != laneKey {
		return ErrKeyIdentityMismatch
	}
	res.Item, res.Created = item, false
	return nil
}

func validateSpec(s *EnqueueSpec) error {
	switch {
	case s.Kind == "" || len(s.Kind) > 128 || !utf8.ValidString(s.Kind):
		return invalidArgument("kind must be 1..128 bytes of UTF-8")
	case s.PayloadVersion <= 0:
		return invalidArgument("payload version must be > 0")
	case len(s.ScopeID) == 0 || len(s.ScopeID) > 256:
		return invalidArgument("scope id must be 1..256 bytes")
	case !isHex64(s.LogicalKey):
		return invalidArgument("logical key must be 64 lowercase hex characters")
	case s.MaxAttempts <= 0:
		return invalidArgument("max attempts must be > 0")
	}
	return nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
