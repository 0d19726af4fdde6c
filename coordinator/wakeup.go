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
// db.ChannelWorkFinished, in the transaction itself, so the notification is delivered exactly when it commits. A
// Ledger that listens (Listen) wakes its workers' claim loops on the first and its item waiters (a flush) on the
// second. Every notification is only a hint: workers still poll and waiters still read the database, so a lost
// notification delays work by at most one poll and never loses it.

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

// noteEnqueued is called inside a transaction that made work claimable (a created item).
func (l *Ledger) noteEnqueued(ctx context.Context) {
	if l.wake.on.Load() {
		l.wake.enqueued.note(ctx)
	}
}

// noteFinished is called inside a transaction that moved an item to a terminal status.
func (l *Ledger) noteFinished(ctx context.Context) {
	if l.wake.on.Load() {
		l.wake.finished.note(ctx)
	}
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

// onEnqueued registers wake to be called on every work-enqueued notification (and on every listener
// (re)connect); it returns the unregister func.
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

// noteTransition is called inside an operator transition: a requeued item is claimable work, a cancelled one is
// finished (and its lane's next item may have become the head).
func (l *Ledger) noteTransition(ctx context.Context, item db.WorkItem) {
	switch item.Status {
	case db.StatusQueued:
		l.noteEnqueued(ctx)
	case db.StatusCancelled:
		l.noteFinished(ctx)
		l.noteEnqueued(ctx)
	case db.StatusSucceeded, db.StatusFailed:
		l.noteFinished(ctx)
	}
}
