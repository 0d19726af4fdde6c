package coordinator_test

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/internal/testutil"
)

// wakeBound is how soon after an enqueue a worker woken by a notification must have started the item. Far below
// the one-minute poll of these tests, so only a notification (or a listener's reconnect) can meet it; generous
// for a loaded 2-core CI machine (it takes a few milliseconds).
const wakeBound = 3 * time.Second

// listeningWorker runs, on its own store (its own pool: like another process), a ledger that listens and a worker
// that polls once a minute. It counts the listener's connects and losses and the worker's claim passes, so a test
// can wait for the worker to be asleep (settle) instead of sleeping a fixed time.
type listeningWorker struct {
	store    db.Store
	url      dburl.URL
	ledger   *coordinator.Ledger
	worker   *coordinator.Worker
	handler  *slotHandler
	connects atomic.Int32
	lost     atomic.Int32
	connCh   chan struct{}
	appName  string       // the store's application_name (PostgreSQL)
	barriers chan string  // payloads of notifications that carry one (a test's barrier)
	lastPass atomic.Int64 // when the last claim pass ended (UnixNano)
	passes   atomic.Int64 // claim passes ended
}

func startListeningWorker(t *testing.T, engine db.Engine, u dburl.URL, poll time.Duration, listen bool) *listeningWorker {
	name := ""
	if engine == db.EnginePostgres {
		u, name = withAppName(t, u)
	}
	w := startListeningWorkerOn(t, engine, u, enginetest.OpenStore(t, u), poll, listen)
	w.appName = name
	return w
}

func startListeningWorkerOn(t *testing.T, engine db.Engine, u dburl.URL, store db.Store, poll time.Duration, listen bool) *listeningWorker {
	t.Helper()
	w := &listeningWorker{store: store, url: u, ledger: coordinator.NewLedger(store), connCh: make(chan struct{}, 16),
		barriers: make(chan string, 16), handler: &slotHandler{kind: testKind, started: make(chan struct{}, 256)}}
	w.lastPass.Store(time.Now().UnixNano())
	w.ledger.SetNotify(listen)
	worker, err := coordinator.NewWorker(w.ledger, coordinator.WorkerConfig{Owner: "listening-worker", Concurrency: 32,
		Poll: poll, Logger: zerolog.Nop(), Hooks: coordinator.WorkerHooks{
			ClaimPass: func(time.Duration, []coordinator.Claim, int) {
				w.lastPass.Store(time.Now().UnixNano())
				w.passes.Add(1)
			}}}, w.handler)
	require.NoError(t, err)
	w.worker = worker
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Add(1)
	go func() { defer wg.Done(); _ = worker.Run(ctx) }()
	if !listen {
		return w
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := w.ledger.Listen(ctx, coordinator.ListenHooks{
			Connected: func() { w.connects.Add(1); notify(w.connCh) },
			Lost:      func(error) { w.lost.Add(1) },
			Notified: func(_, payload string) {
				if strings.Contains(payload, ":barrier-") {
					w.barriers <- payload
				}
			},
		})
		if engine != db.EnginePostgres {
			require.ErrorIs(t, err, coordinator.ErrNoNotifications)
		}
	}()
	if engine == db.EnginePostgres {
		await(t, w.connCh, 1, 10*time.Second, "the listener never connected")
		w.quiet(t) // the passes of the start and of the connect's wake-up
	}
	return w
}

// startedWithin reports whether the worker starts an attempt within d.
func (w *listeningWorker) startedWithin(d time.Duration) bool {
	select {
	case <-w.handler.started:
		return true
	case <-time.After(d):
		return false
	}
}

// settle waits until the worker's item has succeeded and the worker is asleep again: its attempt has returned,
// every notification sent before now has reached the listener (barrier) and its claim passes are over (quiet).
// Fixed sleeps were not enough on a loaded machine: a late work-finished notification woke a test's waiter, and
// the pass of the freed slot claimed an item enqueued without a notification.
func (w *listeningWorker) settle(t *testing.T, workID string) {
	t.Helper()
	require.Eventually(t, func() bool {
		item, err := w.ledger.Get(context.Background(), workID)
		return err == nil && item.Status == db.StatusSucceeded && w.worker.Running() == 0
	}, 10*time.Second, 5*time.Millisecond)
	w.barrier(t)
	w.quiet(t)
}

// barrier sends a notification with a payload from a connection of its own and waits until the listener has
// received it. PostgreSQL delivers notifications in commit order, so every notification committed before it has
// been received and acted on by then. A work-finished one: it wakes only item waiters, and tests take theirs after.
func (w *listeningWorker) barrier(t *testing.T) {
	t.Helper()
	sqlDB := enginetest.OpenSQLDB(t, w.url)
	defer sqlDB.Close()
	var payload string
	require.NoError(t, sqlDB.QueryRow(`SELECT current_schema() || $1`, fmt.Sprintf(":barrier-%d", time.Now().UnixNano())).Scan(&payload))
	_, err := sqlDB.Exec(`SELECT pg_notify($1, $2)`, db.ChannelWorkFinished, payload)
	require.NoError(t, err)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-w.barriers:
			if got == payload {
				return
			}
		case <-deadline:
			t.Fatal("the barrier notification never reached the listener")
		}
	}
}

// quiet waits until no claim pass has ended for 300 ms: the passes that wake-ups already signalled are over.
func (w *listeningWorker) quiet(t *testing.T) {
	t.Helper()
	const quiet = 300 * time.Millisecond
	require.Eventually(t, func() bool { return time.Since(time.Unix(0, w.lastPass.Load())) >= quiet },
		20*time.Second, 10*time.Millisecond, "the worker's claim passes never went quiet")
}

// listenerPID is the backend pid of the wake-up listener's connection: the session of this worker's store (its
// own application_name: other tests' listeners share the database) whose last statement was the listener's
// CurrentSchema, named by sqlc's comment. This query runs under the same application_name and its own text holds
// the pattern, so its session is excluded: CI once picked it, and terminating it after it closed returned false.
func listenerPID(t *testing.T, w *listeningWorker) int {
	t.Helper()
	sqlDB := enginetest.OpenSQLDB(t, w.url)
	defer sqlDB.Close()
	var pid int
	require.NoError(t, sqlDB.QueryRow(`SELECT pid FROM pg_stat_activity WHERE application_name = $1
		AND pid <> pg_backend_pid() AND query LIKE '%name: CurrentSchema :one%'`, w.appName).Scan(&pid))
	return pid
}

// onPostgres runs fn on PostgreSQL alone (notifications are PostgreSQL's) with a migrated database and a ledger on it
// that notifies with its commits.
func onPostgres(t *testing.T, fn func(t *testing.T, engine db.Engine, u dburl.URL, notifying *coordinator.Ledger)) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		if engine != db.EnginePostgres {
			t.Skip("notifications are PostgreSQL's")
		}
		u := enginetest.MigratedDatabase(t, engine)
		notifying := coordinator.NewLedger(enginetest.OpenStore(t, u))
		notifying.SetNotify(true)
		fn(t, engine, u, notifying)
	})
}

// withAppName returns u with a PostgreSQL application_name of its own, naming the sessions of a store opened on it.
func withAppName(t *testing.T, u dburl.URL) (dburl.URL, string) {
	t.Helper()
	parsed, err := url.Parse(u.DSN)
	require.NoError(t, err)
	name := fmt.Sprintf("pc-test-%d", time.Now().UnixNano())
	q := parsed.Query()
	q.Set("application_name", name)
	parsed.RawQuery = q.Encode()
	u.DSN = parsed.String()
	return u, name
}

// TestWakeupAcrossProcesses: a worker on another pool with a one-minute poll starts an item within milliseconds of
// its enqueue (the notification); an enqueue that does not notify waits for the poll; after its connection is
// killed (pg_terminate_backend) the listener reconnects, wakes the worker at once (which then finds the item the
// silent enqueue left), and notifications work again. Other engines have no listener: Listen refuses.
func TestWakeupAcrossProcesses(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		u := enginetest.MigratedDatabase(t, engine)
		api := coordinator.NewLedger(enginetest.OpenStore(t, u))
		api.SetNotify(true)
		silent := coordinator.NewLedger(enginetest.OpenStore(t, u)) // an enqueuer with notifications off
		w := startListeningWorker(t, engine, u, time.Minute, true)
		if engine != db.EnginePostgres {
			require.ErrorIs(t, silent.Listen(context.Background(), coordinator.ListenHooks{}), coordinator.ErrNoNotifications)
			return
		}

		start := time.Now()
		first := enqueue(t, api, "wake-1", "w", 3)
		require.True(t, w.startedWithin(wakeBound), "a notified enqueue was not claimed within %s (poll is 1 min)", wakeBound)
		t.Logf("notified enqueue → start %s", time.Since(start).Round(time.Microsecond))
		w.settle(t, first.Item.WorkID)

		enqueue(t, silent, "wake-2", "w", 3)
		require.False(t, w.startedWithin(500*time.Millisecond), "an enqueue without a notification was claimed before the poll")

		pid := listenerPID(t, w)
		sqlDB := enginetest.OpenSQLDB(t, u)
		defer sqlDB.Close()
		var ok bool
		require.NoError(t, sqlDB.QueryRow(`SELECT pg_terminate_backend($1)`, pid).Scan(&ok))
		require.True(t, ok)
		await(t, w.connCh, 1, 10*time.Second, "the listener did not reconnect")
		require.GreaterOrEqual(t, w.lost.Load(), int32(1))
		require.True(t, w.startedWithin(wakeBound), "the reconnect did not wake the worker for the item enqueued silently")
		require.NotEqual(t, pid, listenerPID(t, w), "a new connection listens")

		w.quiet(t)
		start = time.Now()
		enqueue(t, api, "wake-3", "w", 3)
		require.True(t, w.startedWithin(wakeBound), "a notified enqueue after the reconnect was not claimed within %s", wakeBound)
		t.Logf("after reconnect: notified enqueue → start %s", time.Since(start).Round(time.Microsecond))
	})
}

// TestWakeupConcurrentEnqueuesAllWake: many enqueues commit at once from one process; the pacer lets one notify
// with its COMMIT and the others skip, yet a notification follows every commit, so the listening worker (one-minute
// poll) starts all of them promptly.
func TestWakeupConcurrentEnqueuesAllWake(t *testing.T) {
	onPostgres(t, func(t *testing.T, engine db.Engine, u dburl.URL, api *coordinator.Ledger) {
		w := startListeningWorker(t, engine, u, time.Minute, true)
		const n = 24
		for round := range 3 {
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					enqueue(t, api, fmt.Sprintf("burst-%d-%d", round, i), "w", 3)
				}()
			}
			wg.Wait()
			for i := range n {
				require.True(t, w.startedWithin(wakeBound), "round %d: only %d of %d concurrent enqueues were claimed", round, i, n)
			}
			w.quiet(t) // the next round starts from a worker whose claim passes are over
		}
	})
}

// TestWakeupFinishedWakesWaiters: an item waiter (a flush) on another pool learns of the item's completion from
// the work-finished notification, not from its next read.
func TestWakeupFinishedWakesWaiters(t *testing.T) {
	onPostgres(t, func(t *testing.T, engine db.Engine, u dburl.URL, workerSide *coordinator.Ledger) {
		w := startListeningWorker(t, engine, u, time.Minute, true)
		apiSide := w.ledger // listens; this test uses its waiters, not its worker

		first := enqueue(t, workerSide, "finish-1", "w", 3) // notified: the listening worker runs it
		require.True(t, w.startedWithin(wakeBound))
		w.settle(t, first.Item.WorkID)

		res := enqueue(t, coordinator.NewLedger(enginetest.OpenStore(t, u)), "finish-2", "w", 3) // silent: the worker sleeps
		changed, stop := apiSide.Changed(res.Item.WorkID)
		defer stop()
		cl := claim(t, workerSide, "other-process", 1, time.Minute)
		require.Len(t, cl, 1)
		select {
		case <-changed:
			t.Fatal("a claim in another process is not a finish: nothing should have woken the waiter")
		case <-time.After(300 * time.Millisecond): // proves an absence: waiting a while is the only way
		}
		_, err := workerSide.Complete(context.Background(), cl[0], coordinator.Result{Code: "processed"}, nil)
		require.NoError(t, err)
		select {
		case <-changed:
		case <-time.After(wakeBound):
			t.Fatal("the waiter was not woken by the other process's completion")
		}
	})
}

// TestWakeupPollingFloor: without notifications (turned off, or an engine without them) a worker on another pool
// still picks the work up at its next poll.
func TestWakeupPollingFloor(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		u := enginetest.MigratedDatabase(t, engine)
		api := coordinator.NewLedger(enginetest.OpenStore(t, u))
		api.SetNotify(false)
		store := enginetest.OpenStore(t, u)
		if engine == db.EngineSQLite {
			store = api.Store() // one process owns an embedded database
		}
		w := startListeningWorkerOn(t, engine, u, store, 300*time.Millisecond, false)
		testutil.Eventually(t, 30*time.Second, func() bool { return w.passes.Load() > 0 },
			"the worker's first claim pass never ended") // so only a later poll can claim what follows
		for i := range 3 {
			enqueue(t, api, fmt.Sprintf("floor-%d", i), "w", 3)
			require.True(t, w.startedWithin(wakeBound), "item %d was not claimed by polling", i)
		}
	})
}

// listeningWorkerChild is the child process of TestWakeupAcrossOSProcesses: a worker polling once a minute on a
// ledger that listens for wake-ups. It prints "ready" once the listener is connected and the claim passes of the
// start and of the connect's wake-up are over (none for 300 ms: on a loaded CI machine they can take longer than
// any fixed sleep), and "started SCOPE" when an attempt starts.
func listeningWorkerChild(l *coordinator.Ledger, name string) {
	l.SetNotify(true)
	ctx := context.Background()
	connected := make(chan struct{})
	var once sync.Once
	go func() {
		_ = l.Listen(ctx, coordinator.ListenHooks{Connected: func() { once.Do(func() { close(connected) }) }})
	}()
	var passes, lastPass atomic.Int64 // claim passes ended, and when the last one ended (UnixNano)
	h := &scopeReporter{}
	w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: name, Poll: time.Minute, Logger: zerolog.Nop(),
		Hooks: coordinator.WorkerHooks{ClaimPass: func(time.Duration, []coordinator.Claim, int) {
			lastPass.Store(time.Now().UnixNano())
			passes.Add(1)
		}}}, h)
	if err != nil {
		os.Exit(6)
	}
	go func() { _ = w.Run(ctx) }()
	<-connected
	const quiet = 300 * time.Millisecond
	for passes.Load() == 0 || time.Since(time.Unix(0, lastPass.Load())) < quiet {
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Println("ready")
	select {}
}

// scopeReporter prints the scope of every attempt it starts and succeeds.
type scopeReporter struct{}

func (scopeReporter) Kind() string { return testKind }
func (scopeReporter) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: 1, Max: 1}
}
func (scopeReporter) Prepare(_ context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	fmt.Println("started " + item.ScopeID)
	return coordinator.Prepared{Result: coordinator.Result{Code: "processed"}}, nil
}

// TestWakeupAcrossOSProcesses: a worker in another OS process, polling once a minute, starts an item within
// milliseconds of its enqueue here (PostgreSQL's notification); an item enqueued without one waits.
func TestWakeupAcrossOSProcesses(t *testing.T) {
	onPostgres(t, func(t *testing.T, engine db.Engine, u dburl.URL, api *coordinator.Ledger) {
		cmd := childCmd(t, "listening-worker", "os-worker", u)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		next := func(d time.Duration) string {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("the worker process exited")
				}
				return l
			case <-time.After(d):
				return ""
			}
		}
		require.Equal(t, "ready", next(30*time.Second))

		silent := coordinator.NewLedger(enginetest.OpenStore(t, u))
		enqueue(t, silent, "os-silent", "w", 3)
		require.Empty(t, next(500*time.Millisecond), "an enqueue without a notification was claimed before the poll")

		start := time.Now()
		enqueue(t, api, "os-notified", "w", 3)
		got := []string{next(wakeBound), next(wakeBound)} // the woken pass claims both heads
		require.ElementsMatch(t, []string{"started os-silent", "started os-notified"}, got)
		t.Logf("enqueue here → start in the other process: %s", time.Since(start).Round(time.Microsecond))
	})
}

// TestWakeupSnoozeCancelWakesWaiters: a snooze that finds a cancel request finishes the item as cancelled, and that
// finish wakes a waiter in another process like every other terminal transition (Fail's cancel branch did; Snooze's
// did not).
func TestWakeupSnoozeCancelWakesWaiters(t *testing.T) {
	onPostgres(t, func(t *testing.T, engine db.Engine, u dburl.URL, workerSide *coordinator.Ledger) {
		w := startListeningWorker(t, engine, u, time.Minute, true)
		apiSide := w.ledger

		res := enqueue(t, coordinator.NewLedger(enginetest.OpenStore(t, u)), "snooze-cancel", "w", 3) // silent
		cl := claim(t, workerSide, "other-process", 1, time.Minute)
		require.Len(t, cl, 1)
		require.Equal(t, res.Item.WorkID, cl[0].Item.WorkID)
		_, err := coordinator.NewLedger(enginetest.OpenStore(t, u)).Cancel(context.Background(), cl[0].Item.WorkID, cl[0].Item.StateVersion)
		require.NoError(t, err)
		changed, stop := apiSide.Changed(res.Item.WorkID)
		defer stop()
		item, err := workerSide.Snooze(context.Background(), cl[0], coordinator.Failure{Category: "rate_limit", Code: "busy"}, time.Second, 5)
		require.NoError(t, err)
		require.Equal(t, db.StatusCancelled, item.Status)
		select {
		case <-changed:
		case <-time.After(wakeBound):
			t.Fatal("the waiter was not woken by the other process's cancelled snooze")
		}
	})
}
