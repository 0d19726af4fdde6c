package db

import (
	"context"
	"sync"
)

// Wake-up channels (docs/protocol.md#wake-ups). A notification carries no content: it only says that something
// may have changed in the sender's schema (its payload), and the receiver reads the database to find out what.
const (
	// ChannelWorkEnqueued is notified by a transaction that made work claimable (an enqueue, a retry due at once,
	// or a lane head that moved on to a later item): workers listening on it run a claim pass.
	ChannelWorkEnqueued = "pc_work_enqueued"
	// ChannelWorkFinished is notified by a transaction that moved an item to a terminal status (succeeded, failed,
	// cancelled): waiters for an item (a flush) read it again.
	ChannelWorkFinished = "pc_work_finished"
)

// Notifications is implemented by a Store whose engine can wake other processes (PostgreSQL LISTEN/NOTIFY). Other
// engines do not implement it: their processes learn of changes by polling (docs/protocol.md#wake-ups).
type Notifications interface {
	// Listen holds one dedicated connection (not one of the pool's) listening on both channels until ctx is done,
	// reconnecting with backoff whenever the connection is lost or cannot be made. It returns ctx's error.
	Listen(ctx context.Context, h ListenHandlers) error
	// Notify notifies channel in a transaction of its own (autocommit).
	Notify(ctx context.Context, channel string) error
}

// ListenHandlers receive a listener's events. They are called from Listen's goroutine, one at a time, and must
// not block. Every field is optional.
type ListenHandlers struct {
	// Connected is called after every (re)connect once LISTEN is in effect: notifications sent while the listener
	// was disconnected are lost, so the receiver should act as if every channel had been notified.
	Connected func()
	// Notified is called once per notification received from the listener's own schema, with its channel and
	// payload (the schema, optionally followed by ":" and a tag that only tests send).
	Notified func(channel, payload string)
	// Lost is called when a connection could not be made or was lost, before the backoff; err is the driver's
	// error (for its class only: never log its text).
	Lost func(err error)
}

// TxNotes collects, for one transaction of an engine with notifications, the channels to notify when it commits
// and the functions to call once it has ended. An adapter's InTx creates it (WithTxNotes), passes the returned
// context to fn, sends Channels with its COMMIT and calls End afterwards.
type TxNotes struct {
	mu       sync.Mutex
	channels []string
	after    []func(committed bool)
	ended    bool
}

type txNotesKey struct{}

// WithTxNotes returns ctx carrying fresh notes for one transaction (adapters only).
func WithTxNotes(ctx context.Context) (context.Context, *TxNotes) {
	n := &TxNotes{}
	return context.WithValue(ctx, txNotesKey{}, n), n
}

func notesOf(ctx context.Context) *TxNotes {
	n, _ := ctx.Value(txNotesKey{}).(*TxNotes)
	return n
}

// Notifies reports whether ctx is that of a transaction (inside Store.InTx) whose engine can notify.
func Notifies(ctx context.Context) bool { return notesOf(ctx) != nil }

// NotifyOnCommit asks the transaction of ctx to notify channel when, and only if, it commits (sent in the COMMIT's
// round trip). It reports false, and does nothing, when Notifies(ctx) is false.
func NotifyOnCommit(ctx context.Context, channel string) bool {
	n := notesOf(ctx)
	if n == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range n.channels {
		if c == channel {
			return true
		}
	}
	n.channels = append(n.channels, channel)
	return true
}

// NotifiesOnCommit reports whether the transaction of ctx already notifies channel when it commits.
func NotifiesOnCommit(ctx context.Context, channel string) bool {
	n := notesOf(ctx)
	if n == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range n.channels {
		if c == channel {
			return true
		}
	}
	return false
}

// AfterTx registers f to be called once the transaction of ctx has ended, with whether it committed. It reports
// false, and does nothing, when Notifies(ctx) is false.
func AfterTx(ctx context.Context, f func(committed bool)) bool {
	n := notesOf(ctx)
	if n == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.after = append(n.after, f)
	return true
}

// Channels returns the channels to notify at commit (adapters only).
func (n *TxNotes) Channels() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.channels...)
}

// End calls the AfterTx functions once, in registration order (adapters only).
func (n *TxNotes) End(committed bool) {
	n.mu.Lock()
	if n.ended {
		n.mu.Unlock()
		return
	}
	n.ended = true
	after := n.after
	n.after = nil
	n.mu.Unlock()
	for _, f := range after {
		f(committed)
	}
}
