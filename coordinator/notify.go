package coordinator

import (
	"context"
	"sync"
	"time"

	"github.com/powercontext/powercontext/db"
)

// itemWatch lets in-process waiters (a flush waiting for its operation) learn at once that an item changed state
// through this Ledger, instead of finding out at their next database poll. It is only a hint: waiters still read
// the item from the database, and changes made by other processes are seen by polling. Entries are reference
// counted so waiters that give up (or whose item another process finished) leave nothing behind.
type itemWatch struct {
	mu sync.Mutex
	m  map[string]*watchEntry
}

type watchEntry struct {
	ch chan struct{}
	n  int
}

func (w *itemWatch) watch(workID string) (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]*watchEntry{}
	}
	e, ok := w.m[workID]
	if !ok {
		e = &watchEntry{ch: make(chan struct{})}
		w.m[workID] = e
	}
	e.n++
	var once sync.Once
	return e.ch, func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if e.n--; e.n == 0 && w.m[workID] == e {
				delete(w.m, workID)
			}
		})
	}
}

func (w *itemWatch) notify(workID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.m[workID]; ok {
		close(e.ch)
		delete(w.m, workID)
	}
}

// watching reports how many items have waiters (tests).
func (w *itemWatch) watching() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}

// Changed returns a channel closed the next time this Ledger commits a state change of the item (claim, expiry,
// complete, fail, cancel, retry), and a stop func the caller must call when it no longer waits. Take it before
// reading the item so no change is missed.
func (l *Ledger) Changed(workID string) (<-chan struct{}, func()) { return l.watch.watch(workID) }

// Await re-reads item until it is terminal (succeeded, failed or cancelled), wait has passed or ctx is done, and
// returns the last version read. Polls start at 2 ms and grow by half up to maxPoll (default 100 ms): most short
// items finish within a few ms of their wake-up, and doubling overshot a 10 ms flush to 35 ms. An in-process worker
// signals through Changed at once; polling finds what any other replica's worker did.
func (l *Ledger) Await(ctx context.Context, item db.WorkItem, wait, maxPoll time.Duration) (db.WorkItem, error) {
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
