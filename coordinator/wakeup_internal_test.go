package coordinator

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// TestPacerNotifiesAfterEveryCommit drives the pacer with transaction notes directly (the COMMIT's own
// notification is what Channels returns) and its autocommit sends against PostgreSQL, received by a real listener:
// one transaction in flight notifies with its COMMIT, the others skip, and each skipped commit is followed by one
// notification sent on its own once nothing is in flight; a skipped transaction that rolls back sends nothing.
func TestPacerNotifiesAfterEveryCommit(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		if engine != db.EnginePostgres {
			t.Skip("notifications are PostgreSQL's")
		}
		store := enginetest.Open(t, engine)
		n := store.(db.Notifications)
		got := make(chan string, 64)
		connected := make(chan struct{}, 4)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		t.Cleanup(func() { cancel(); wg.Wait() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = n.Listen(ctx, db.ListenHandlers{Connected: func() { connected <- struct{}{} }, Notified: func(ch, _ string) { got <- ch }})
		}()
		<-connected
		received := func(want int) {
			t.Helper()
			for range want {
				select {
				case ch := <-got:
					require.Equal(t, db.ChannelWorkEnqueued, ch)
				case <-time.After(5 * time.Second):
					t.Fatal("a paced notification was not sent")
				}
			}
			select {
			case <-got:
				t.Fatal("more notifications than commits that needed one")
			case <-time.After(300 * time.Millisecond):
			}
		}
		p := &pacer{channel: db.ChannelWorkEnqueued, n: n}
		tx := func() (context.Context, *db.TxNotes) { return db.WithTxNotes(context.Background()) }

		p.note(context.Background()) // not a transaction of an engine with notifications: nothing
		require.False(t, p.isBusy())

		a, notesA := tx()
		p.note(a)
		require.Equal(t, []string{db.ChannelWorkEnqueued}, notesA.Channels(), "the first in flight notifies with its COMMIT")
		p.note(a) // a transaction that notes twice (a batch) is still the one in flight, not a skipper
		b, notesB := tx()
		p.note(b)
		require.Empty(t, notesB.Channels(), "a second one in flight skips")
		notesA.End(true)
		received(0) // A's COMMIT carried its notification (not sent here); B has not committed
		notesB.End(true)
		received(1) // B committed after A: one notification on its own

		a, notesA = tx()
		p.note(a)
		b, notesB = tx()
		p.note(b)
		c, notesC := tx()
		p.note(c)
		notesB.End(true) // B and C commit while A is still in flight: one pending mark, sent when A ends
		notesC.End(true)
		received(0)
		notesA.End(false) // even if A rolls back
		received(1)

		a, notesA = tx()
		p.note(a)
		b, notesB = tx()
		p.note(b)
		notesB.End(false) // a skipped transaction that rolled back needs no wake-up
		notesA.End(true)
		received(0)
		require.False(t, p.isBusy())
	})
}

func (p *pacer) isBusy() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy
}
