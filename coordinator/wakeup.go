package coordinator

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/powercontext/powercontext/db"
)

// Cross-process wake-ups (docs/protocol.md#wake-ups). On an engine with notifications (PostgreSQL), a transaction
// that makes work claimable notifies db.ChannelWorkEnqueued and one that finishes an item notifies
// db.ChannelWorkFinished, in the transaction itself, so the notification is delivered exactly when it commits; which
// transaction notifies what is derived from its writes (transition.go). A Ledger that listens (Listen) wakes its
// workers' claim loops on the first and its item waiters (a flush) on the second. Every notification is only a
// hint: workers still poll and waiters still read the database, so a lost notification delays work by at most one
// poll and never loses it.

// ErrNoNotifications is returned by Listen when the store's engine has no notifications.
var ErrNoNotifications = errors.New("coordinator: this engine has no notifications; workers poll")

// notifySendTimeout bounds one paced notification sent on its own.
const notifySendTimeout = 5 * time.Second

// wakeups is a Ledger's wake-up state: whether it notifies, one pacer per channel, and the workers to wake.
type wakeups struct {
	on                 atomic.Bool
	enqueued, finished pacer

	mu      sync.Mutex
	next    int
	workers map[int]func()
}

// SetNotify turns notifying on or off (off by default; the service turns it on on PostgreSQL unless
// POWERCONTEXT_COORDINATION_NOTIFY is false). It has an effect only on engines with notifications. Call it before
// the ledger is used.
func (l *Ledger) SetNotify(on bool) {
	l.wake.on.Store(on)
	l.wake.enqueued.channel, l.wake.finished.channel = db.ChannelWorkEnqueued, db.ChannelWorkFinished
	n, _ := l.store.(db.Notifications)
	l.wake.enqueued.n, l.wake.finished.n = n, n
}

// onEnqueued registers wake to be called whenever a transaction of this Ledger made work claimable, on every
// work-enqueued notification and on every listener (re)connect; it returns the unregister func.
func (l *Ledger) onEnqueued(wake func()) func() {
	l.wake.mu.Lock()
	defer l.wake.mu.Unlock()
	if l.wake.workers == nil {
		l.wake.workers = map[int]func(){}
	}
	id := l.wake.next
	l.wake.next++
	l.wake.workers[id] = wake
	return func() {
		l.wake.mu.Lock()
		defer l.wake.mu.Unlock()
		delete(l.wake.workers, id)
	}
}

func (l *Ledger) wakeWorkers() {
	l.wake.mu.Lock()
	defer l.wake.mu.Unlock()
	for _, wake := range l.wake.workers {
		wake()
	}
}

// ListenHooks observe a listening Ledger (logs, metrics). Every field is optional.
type ListenHooks struct {
	// Connected is called after every (re)connect of the listener.
	Connected func()
	// Lost is called when the listener's connection failed or was lost (only ErrorClass(err) may be reported).
	Lost func(err error)
	// Notified is called for every notification received, after the wake-ups it causes have been signalled, with
	// its channel and payload (db.ListenHandlers). Notifications are delivered in commit order, so a test that sends
	// one with a tag of its own knows, once it sees it, that every earlier notification has been acted on.
	Notified func(channel, payload string)
}

// Listen receives wake-ups until ctx is done: a work-enqueued notification wakes the claim loop of every Worker
// running on this Ledger, a work-finished one every Changed waiter (they read their item again), and every
// (re)connect of the listener wakes both, since notifications sent while it was disconnected are lost. It returns
// ErrNoNotifications at once on engines without notifications, else ctx's error.
func (l *Ledger) Listen(ctx context.Context, hooks ListenHooks) error {
	n, ok := l.store.(db.Notifications)
	if !ok {
		return ErrNoNotifications
	}
	// The one place outside transition.go that signals waiters: the receiving end. A notification (or a reconnect)
	// is another process's transition, already committed, and names no item; it is relayed, not derived here.
	return n.Listen(ctx, db.ListenHandlers{
		Connected: func() {
			l.wakeWorkers()
			l.watch.notifyAll()
			if hooks.Connected != nil {
				hooks.Connected()
			}
		},
		Notified: func(channel, payload string) {
			switch channel {
			case db.ChannelWorkEnqueued:
				l.wakeWorkers()
			case db.ChannelWorkFinished:
				l.watch.notifyAll()
			}
			if hooks.Notified != nil {
				hooks.Notified(channel, payload)
			}
		},
		Lost: hooks.Lost,
	})
}

// notifyAll wakes every waiter (a work-finished notification names no item).
func (w *itemWatch) notifyAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, e := range w.m {
		close(e.ch)
		delete(w.m, id)
	}
}
