package coordinator

import (
	"context"
	"sync"
	"time"

	"github.com/powercontext/powercontext/db"
)

// Wake-ups derived from transitions (docs/protocol.md#wake-ups). Every ledger transaction that writes work items
// runs through inTx, which hands its function a ledgerTx: the db.Queries of that one transaction, whose writing
// methods (the state writes, the creating inserts, the head advance) record the wake-ups the write implies. Nothing
// else in this package sends a wake-up: after fn, the notifications ride the transaction's COMMIT (paced), and once
// it has committed the in-process signals go out. A rolled-back transaction, or a savepoint rolled back, sends none.

// wakeSet is what one transaction's committed writes owe its waiters.
type wakeSet struct {
	items     []string // items whose state changed: their Changed waiters (in-process)
	claimable bool     // work became claimable: the workers' claim loops (in-process and db.ChannelWorkEnqueued)
	finished  bool     // an item reached a terminal status: item waiters of other processes (db.ChannelWorkFinished)
}

// wakesOf is the rule, for the written state of one item: its waiters always learn of the change; a terminal status
// (succeeded, failed, cancelled) is "finished"; a queued or retry_wait item due at the write (available_at not after
// updated_at, the transaction's database time) is "claimable".
func wakesOf(item db.WorkItem) wakeSet {
	w := wakeSet{items: []string{item.WorkID}}
	switch item.Status {
	case db.StatusSucceeded, db.StatusFailed, db.StatusCancelled:
		w.finished = true
	case db.StatusQueued, db.StatusRetryWait:
		w.claimable = !item.AvailableAt.After(item.UpdatedAt)
	}
	return w
}

// advanceWakes is the rule for a lane head moving past afterSequence: when the lane holds later items (its
// allocator is past afterSequence+1, as locked in this transaction), its next item may be the new head, which is
// claimable work. A lane this transaction did not lock is assumed to have one (a spare wake-up is only a hint).
func advanceWakes(lane db.WorkLane, known bool, afterSequence int64) wakeSet {
	return wakeSet{claimable: !known || lane.NextSequence > afterSequence+1}
}

func (w *wakeSet) add(o wakeSet) {
	w.items = append(w.items, o.items...)
	w.claimable = w.claimable || o.claimable
	w.finished = w.finished || o.finished
}

// ledgerTx is one ledger transaction: the db.Queries of one Store.InTx (or of a savepoint in it), handed on as q
// to every step, domain commits and enqueue specs included. The methods below shadow the embedded ones that write
// an item's state, create items or advance a lane head, and record the wake-ups of what they wrote; the locking
// reads of lanes remember each lane's allocator, which tells whether an advanced head has a successor.
type ledgerTx struct {
	db.Queries
	wakes wakeSet
	lanes map[string]db.WorkLane // lanes locked in this transaction, as locked
	items map[string]db.WorkItem // items locked with their lane by WorkLaneKeyItemLockMany, as locked
}

func newLedgerTx(q db.Queries) *ledgerTx {
	return &ledgerTx{Queries: q, lanes: map[string]db.WorkLane{}, items: map[string]db.WorkItem{}}
}

// inTx runs fn in one transaction of the store with a ledgerTx over its queries, and sends the wake-ups fn's
// writes recorded: the notifications with the COMMIT, the in-process signals once it has committed.
func (l *Ledger) inTx(ctx context.Context, fn func(ctx context.Context, tx *ledgerTx) error) error {
	var tx *ledgerTx
	err := l.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		tx = newLedgerTx(q) // fresh on every run of fn (a store may run it again)
		if err := fn(ctx, tx); err != nil {
			return err
		}
		l.notifyOnCommit(ctx, tx.wakes)
		return nil
	})
	if err == nil && tx != nil {
		l.wakeInProcess(tx.wakes)
	}
	return err
}

// committedOutside sends the wake-ups of items written by a store method that ran its own transaction, which has
// committed (WorkItemClaimMany): the rule is the same; a notification it implies is sent on its own.
func (l *Ledger) committedOutside(items []db.WorkItem) {
	var w wakeSet
	for _, item := range items {
		w.add(wakesOf(item))
	}
	if l.wake.on.Load() {
		if w.claimable {
			l.wake.enqueued.kick()
		}
		if w.finished {
			l.wake.finished.kick()
		}
	}
	l.wakeInProcess(w)
}

// notifyOnCommit asks the transaction of ctx to notify the channels w implies when it commits (paced).
func (l *Ledger) notifyOnCommit(ctx context.Context, w wakeSet) {
	if !l.wake.on.Load() {
		return
	}
	if w.claimable {
		l.wake.enqueued.note(ctx)
	}
	if w.finished {
		l.wake.finished.note(ctx)
	}
}

// wakeInProcess signals, after the commit, the waiters of this process: every changed item's Changed waiters, and
// the claim loops of this Ledger's workers when work became claimable.
func (l *Ledger) wakeInProcess(w wakeSet) {
	for _, id := range w.items {
		l.watch.notify(id)
	}
	if w.claimable {
		l.wakeWorkers()
	}
}

func (t *ledgerTx) record(w wakeSet) { t.wakes.add(w) }

// recordAdvance records the head of laneKey moving past afterSequence.
func (t *ledgerTx) recordAdvance(laneKey string, afterSequence int64) {
	lane, ok := t.lanes[laneKey]
	t.record(advanceWakes(lane, ok, afterSequence))
}

// Savepoint runs fn over a ledgerTx of the savepoint; its wake-ups count only when the savepoint was kept.
func (t *ledgerTx) Savepoint(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) (error, error) {
	var inner *ledgerTx
	fnErr, err := t.Queries.Savepoint(ctx, func(ctx context.Context, q db.Queries) error {
		inner = &ledgerTx{Queries: q, lanes: t.lanes, items: t.items}
		return fn(ctx, inner)
	})
	if fnErr == nil && err == nil && inner != nil {
		t.record(inner.wakes)
	}
	return fnErr, err
}

// WorkLaneLock remembers the locked lane.
func (t *ledgerTx) WorkLaneLock(ctx context.Context, laneKey string) (db.WorkLane, time.Time, error) {
	lane, now, err := t.Queries.WorkLaneLock(ctx, laneKey)
	if err == nil {
		t.lanes[lane.LaneKey] = lane
	}
	return lane, now, err
}

// WorkLaneKeyDeleteItemLock remembers the locked lane.
func (t *ledgerTx) WorkLaneKeyDeleteItemLock(ctx context.Context, p db.WorkLaneKeyDeleteItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	lane, item, now, err := t.Queries.WorkLaneKeyDeleteItemLock(ctx, p)
	if err == nil {
		t.lanes[lane.LaneKey] = lane
	}
	return lane, item, now, err
}

// WorkLaneKeyItemLockMany remembers the locked lanes and items.
func (t *ledgerTx) WorkLaneKeyItemLockMany(ctx context.Context, refs []db.WorkItemRef) ([]db.LockedItem, time.Time, error) {
	locked, now, err := t.Queries.WorkLaneKeyItemLockMany(ctx, refs)
	if err == nil {
		for _, li := range locked {
			if li.Found {
				t.lanes[li.Lane.LaneKey] = li.Lane
				t.items[li.Item.WorkID] = li.Item
			}
		}
	}
	return locked, now, err
}

// WorkItemUpdateState writes one item's state and records its wake-ups.
func (t *ledgerTx) WorkItemUpdateState(ctx context.Context, p db.WorkItemUpdateStateParams) (int64, error) {
	n, err := t.Queries.WorkItemUpdateState(ctx, p)
	if err == nil && n == 1 {
		t.record(wakesOf(p.Item))
	}
	return n, err
}

// WorkItemUpdateStateInsertAttempt writes one item's state (a claim) and records its wake-ups.
func (t *ledgerTx) WorkItemUpdateStateInsertAttempt(ctx context.Context, p db.WorkItemUpdateStateInsertAttemptParams) (int64, error) {
	n, err := t.Queries.WorkItemUpdateStateInsertAttempt(ctx, p)
	if err == nil && n == 1 {
		t.record(wakesOf(p.State.Item))
	}
	return n, err
}

// WorkItemUpdateStateFinishAttempt writes one item's state, maybe advancing its lane's head, and records the
// wake-ups of both.
func (t *ledgerTx) WorkItemUpdateStateFinishAttempt(ctx context.Context, p db.WorkItemUpdateStateFinishAttemptParams) (int64, error) {
	n, err := t.Queries.WorkItemUpdateStateFinishAttempt(ctx, p)
	if err == nil && n == 1 {
		t.record(wakesOf(p.State.Item))
		if p.AdvanceHead != nil {
			t.recordAdvance(p.AdvanceHead.LaneKey, p.AdvanceHead.AfterSequence)
		}
	}
	return n, err
}

// WorkItemSucceedMany finishes a batch of items (each its lane's head, since it ran) and records their wake-ups.
func (t *ledgerTx) WorkItemSucceedMany(ctx context.Context, p db.WorkItemSucceedManyParams) (int64, error) {
	n, err := t.Queries.WorkItemSucceedMany(ctx, p)
	if err == nil && n > 0 {
		t.recordSucceeded(p.Items)
	}
	return n, err
}

// recordSucceeded records the wake-ups of finished items: each item's waiters, and its lane's next head.
func (t *ledgerTx) recordSucceeded(items []db.SucceedItem) {
	for _, s := range items {
		t.record(wakeSet{items: []string{s.WorkID}, finished: true})
		if item, ok := t.items[s.WorkID]; ok {
			if lane := t.lanes[item.LaneKey]; lane.HeadSequence == item.LaneSequence {
				t.recordAdvance(item.LaneKey, item.LaneSequence)
			}
		} else {
			t.record(wakeSet{claimable: true})
		}
	}
}

// WorkItemSucceedManyAtCommit finishes a batch with the COMMIT and records its wake-ups, which are sent only if that
// COMMIT succeeds, when every item finished.
func (t *ledgerTx) WorkItemSucceedManyAtCommit(ctx context.Context, p db.WorkItemSucceedManyParams) error {
	err := t.Queries.WorkItemSucceedManyAtCommit(ctx, p)
	if err == nil {
		t.recordSucceeded(p.Items)
	}
	return err
}

// WorkLaneAdvanceHead advances a lane's head and records the wake-up of its successor.
func (t *ledgerTx) WorkLaneAdvanceHead(ctx context.Context, p db.WorkLaneAdvanceHeadParams) error {
	err := t.Queries.WorkLaneAdvanceHead(ctx, p)
	if err == nil {
		t.recordAdvance(p.LaneKey, p.AfterSequence)
	}
	return err
}

// WorkKeyItemInsert creates an item (when its key was inserted) and records its wake-ups.
func (t *ledgerTx) WorkKeyItemInsert(ctx context.Context, p db.WorkKeyItemInsertParams) (bool, error) {
	inserted, err := t.Queries.WorkKeyItemInsert(ctx, p)
	if err == nil && inserted {
		t.record(wakesOf(p.Item))
	}
	return inserted, err
}

// WorkKeyItemInsertAtCommit creates an item with the COMMIT and records its wake-ups. Whether the key was free is
// known only once the transaction has committed: when it was not, the wake-up was spare (only a hint).
func (t *ledgerTx) WorkKeyItemInsertAtCommit(ctx context.Context, p db.WorkKeyItemInsertParams, inserted *bool) error {
	err := t.Queries.WorkKeyItemInsertAtCommit(ctx, p, inserted)
	if err == nil && *inserted {
		t.record(wakesOf(p.Item))
	}
	return err
}

// WorkItemEnqueueMany creates items and records their wake-ups.
func (t *ledgerTx) WorkItemEnqueueMany(ctx context.Context, now time.Time, lanes []db.WorkLane, items []db.WorkItem) (int64, int64, error) {
	nl, ni, err := t.Queries.WorkItemEnqueueMany(ctx, now, lanes, items)
	if err == nil {
		for _, item := range items {
			t.record(wakesOf(item))
		}
	}
	return nl, ni, err
}

// pacer keeps at most one notification of its channel in flight per process. Every commit that notifies takes
// the engine's notification queue lock, so unpaced notifications serialise concurrent commits; one wake-up per
// commit interval is all listeners need, since they read the database anyway. The first transaction to note the
// channel while none is in flight notifies it with its own COMMIT; a transaction that finds one in flight skips
// and, once it has committed, leaves a pending mark. A pending mark is sent on its own, in autocommit, as soon as
// nothing is in flight (at once, or when the in-flight transaction ends), so a notification always follows the
// commit of every transaction that noted the channel.
type pacer struct {
	channel string
	n       db.Notifications // nil: no autocommit sends (the in-transaction ones still go out)

	mu      sync.Mutex
	busy    bool // a noting transaction or an autocommit send is in flight
	pending bool // a transaction committed without notifying while busy
}

func (p *pacer) note(ctx context.Context) {
	if !db.Notifies(ctx) || db.NotifiesOnCommit(ctx, p.channel) {
		return // no notifications, or this transaction already notifies (it noted twice: a batch)
	}
	p.mu.Lock()
	mine := !p.busy
	p.busy = true
	p.mu.Unlock()
	if mine {
		db.NotifyOnCommit(ctx, p.channel)
		db.AfterTx(ctx, func(bool) { p.release() })
		return
	}
	db.AfterTx(ctx, func(committed bool) {
		if committed {
			p.kick()
		}
	})
}

// release ends the in-flight noting transaction; a pending mark is sent now.
func (p *pacer) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy = false
	if p.pending {
		p.startSend()
	}
}

// kick leaves a pending mark after a skipped transaction committed.
func (p *pacer) kick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = true
	if !p.busy {
		p.startSend()
	}
}

// startSend sends the pending marks in autocommit, one at a time, until none is left. Caller holds p.mu.
func (p *pacer) startSend() {
	if p.n == nil {
		p.pending = false
		return
	}
	p.busy = true
	go func() {
		for {
			p.mu.Lock()
			if !p.pending {
				p.busy = false
				p.mu.Unlock()
				return
			}
			p.pending = false
			p.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), notifySendTimeout)
			_ = p.n.Notify(ctx, p.channel) // a lost wake-up costs one poll, never work
			cancel()
		}
	}()
}
