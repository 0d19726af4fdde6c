package coordinator

import "sync"

// itemWatch lets in-process waiters (a flush waiting for its operation) learn at once that an item changed state
// through this Ledger (signalled after the commit by transition.go), instead of finding out at their next database poll. It is only a hint: waiters still read
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

// Changed returns a channel closed the next time this Ledger commits a state change of the item (any transition
// of docs/protocol.md#state-machine), and a stop func the caller must call when it no longer waits. Take it before
// reading the item so no change is missed.
func (l *Ledger) Changed(workID string) (<-chan struct{}, func()) { return l.watch.watch(workID) }
