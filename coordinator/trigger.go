package coordinator

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
)

// Outcomes of Trigger (the flush and incubate APIs map them to 200, 202 and 409).
const (
	TriggerIdle      = "idle"      // nothing to do: the request enqueued nothing
	TriggerProcessed = "processed" // the item succeeded within the wait
	TriggerPending   = "pending"   // still queued or running when the wait ended
	TriggerBlocked   = "blocked"   // the joined item had already failed: retry, cancel or skip it
	TriggerFailed    = "failed"    // it failed during the wait
	TriggerCancelled = "cancelled" // it was cancelled during the wait
)

// TriggerOutcome is Trigger's answer: Item is the item enqueued or joined (zero when idle), as last read.
type TriggerOutcome struct {
	Status string
	Item   db.WorkItem
}

// Trigger is the on-demand start of a consumer's next window (a memory flush, an experience incubation): it enqueues
// or joins req's item, calls wake after creating one (an in-process worker, single_node; optional), and waits up to
// wait for it to finish, polling the database so any replica can answer (maxPoll: see await).
func (l *Ledger) Trigger(ctx context.Context, req EnqueueRequest, wake func(), wait, maxPoll time.Duration) (TriggerOutcome, error) {
	res, err := l.Enqueue(ctx, req)
	if err != nil {
		return TriggerOutcome{}, err
	}
	if res.Idle {
		return TriggerOutcome{Status: TriggerIdle}, nil
	}
	// Not a wake-up of the transition (that one already woke this Ledger's workers, transition.go): wake is the
	// caller's own hook, for a worker that may run on another Ledger value, so it stays the caller's to send.
	if res.Created && wake != nil {
		wake()
	}
	if res.Item.Status == db.StatusFailed {
		return TriggerOutcome{Status: TriggerBlocked, Item: res.Item}, nil
	}
	item, err := l.await(ctx, res.Item, wait, maxPoll)
	if err != nil {
		return TriggerOutcome{}, err
	}
	switch item.Status {
	case db.StatusSucceeded:
		return TriggerOutcome{Status: TriggerProcessed, Item: item}, nil
	case db.StatusFailed:
		return TriggerOutcome{Status: TriggerFailed, Item: item}, nil
	case db.StatusCancelled:
		return TriggerOutcome{Status: TriggerCancelled, Item: item}, nil
	}
	return TriggerOutcome{Status: TriggerPending, Item: item}, nil
}

// await re-reads item until it is terminal (succeeded, failed or cancelled), wait has passed or ctx is done, and
// returns the last version read. Polls start at 2 ms and grow by half up to maxPoll (default 100 ms): most short
// items finish within a few ms of their wake-up, and doubling overshot a 10 ms flush to 35 ms. An in-process worker
// signals through Changed at once; polling finds what any other replica's worker did.
func (l *Ledger) await(ctx context.Context, item db.WorkItem, wait, maxPoll time.Duration) (db.WorkItem, error) {
	if maxPoll <= 0 {
		maxPoll = 100 * time.Millisecond
	}
	poll := min(2*time.Millisecond, maxPoll)
	start := time.Now()
	changed, stop := l.Changed(item.WorkID)
	defer func() { stop() }()
	for {
		switch item.Status {
		case db.StatusSucceeded, db.StatusFailed, db.StatusCancelled:
			return item, nil
		}
		remaining := wait - time.Since(start)
		if remaining <= 0 {
			return item, nil
		}
		t := time.NewTimer(min(poll, remaining))
		select {
		case <-ctx.Done():
			t.Stop()
			return item, nil
		case <-changed: // an in-process worker moved the item: read it now
			t.Stop()
		case <-t.C:
			poll = min(poll+poll/2, maxPoll)
		}
		stop()
		changed, stop = l.Changed(item.WorkID) // before the read, so no change is missed
		next, err := l.Get(ctx, item.WorkID)
		if err != nil {
			return item, err
		}
		item = next
	}
}
