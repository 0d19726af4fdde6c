package coordinator

import (
	"context"
	"database/sql"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/enginetest"
)

// wakeCase is one transition of the item state machine (docs/protocol.md#state-machine) and the wake-ups it must
// send (docs/protocol.md#wake-ups). doc is the operation's label in the state machine's diagram.
type wakeCase struct {
	name                string
	from, doc, to       string
	claimable, finished bool
	// run brings a fresh item (on lanes of its own) to from, then makes the transition; it returns the item that
	// must move and the operation, run by the test between its observations.
	run func(h *wakeHarness) (workID string, op func() (db.WorkItem, error))
}

// The operations' labels in docs/protocol.md#state-machine.
const (
	docEnqueue       = "enqueue"
	docClaim         = "claim"
	docComplete      = "complete"
	docFailRetry     = "fail: retryable, budget left"
	docSnooze        = "snooze: rate limited, under the cap"
	docExpiredRetry  = "lease expired, budget left"
	docFailFailed    = "fail: not retryable or budget spent"
	docExpiredFailed = "lease expired, budget spent"
	docCancel        = "operator cancel"
	docConfirm       = "worker confirms, or lease expired"
	docRetry         = "operator retry"
	docSkip          = "operator skip (windows)"
)

var errFailure = Failure{Category: "test", Code: "boom", Retryable: true}

func wakeCases() []wakeCase {
	return []wakeCase{
		{name: "enqueue creates", from: "", doc: docEnqueue, to: db.StatusQueued, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				return "", func() (db.WorkItem, error) { // no waiter: the item has no id before it exists
					res, err := h.l.Enqueue(h.ctx, h.request("a", "w1", 3))
					return res.Item, err
				}
			}},
		{name: "claim queued", from: db.StatusQueued, doc: docClaim, to: db.StatusRunning,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				item := h.enqueue("a", "w1", 3)
				return item.WorkID, h.claimOp(item.WorkID, time.Minute)
			}},
		{name: "claim retry_wait", from: db.StatusRetryWait, doc: docClaim, to: db.StatusRunning,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				item := h.enqueue("a", "w1", 3)
				_, err := h.l.Fail(h.ctx, h.claim(item.WorkID, time.Minute), errFailure, 0)
				require.NoError(h.t, err)
				return item.WorkID, h.claimOp(item.WorkID, time.Minute)
			}},
		{name: "complete, last of its lane", from: db.StatusRunning, doc: docComplete, to: db.StatusSucceeded, finished: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
				return c.Item.WorkID, func() (db.WorkItem, error) { return h.l.Complete(h.ctx, c, Result{Code: "ok"}, nil) }
			}},
		{name: "complete, lane has a successor", from: db.StatusRunning, doc: docComplete, to: db.StatusSucceeded, finished: true, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
				h.enqueue("a", "w2", 3)
				return c.Item.WorkID, func() (db.WorkItem, error) { return h.l.Complete(h.ctx, c, Result{Code: "ok"}, nil) }
			}},
		{name: "complete many, lane has a successor", from: db.StatusRunning, doc: docComplete, to: db.StatusSucceeded, finished: true, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
				h.enqueue("a", "w2", 3)
				return c.Item.WorkID, func() (db.WorkItem, error) {
					out := h.l.CompleteMany(h.ctx, []Completion{{Claim: c, Result: Result{Code: "ok"}}})
					return out[0].Item, out[0].Err
				}
			}},
		{name: "fail retryable, due later", from: db.StatusRunning, doc: docFailRetry, to: db.StatusRetryWait,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
				return c.Item.WorkID, func() (db.WorkItem, error) { return h.l.Fail(h.ctx, c, errFailure, time.Hour) }
			}},
		{name: "fail retryable, due now", from: db.StatusRunning, doc: docFailRetry, to: db.StatusRetryWait, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
				return c.Item.WorkID, func() (db.WorkItem, error) { return h.l.Fail(h.ctx, c, errFailure, 0) }
			}},
		{name: "snooze", from: db.StatusRunning, doc: docSnooze, to: db.StatusRetryWait,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
				return c.Item.WorkID, func() (db.WorkItem, error) { return h.l.Snooze(h.ctx, c, errFailure, time.Hour, 5) }
			}},
		{name: "lease expired, budget left", from: db.StatusRunning, doc: docExpiredRetry, to: db.StatusRetryWait, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, 50*time.Millisecond)
				h.expired(c)
				return c.Item.WorkID, h.expireOp(c.Item.WorkID)
			}},
		{name: "fail, not retryable", from: db.StatusRunning, doc: docFailFailed, to: db.StatusFailed, finished: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
				f := errFailure
				f.Retryable = false
				return c.Item.WorkID, func() (db.WorkItem, error) { return h.l.Fail(h.ctx, c, f, 0) }
			}},
		{name: "lease expired, budget spent", from: db.StatusRunning, doc: docExpiredFailed, to: db.StatusFailed, finished: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 1).WorkID, 50*time.Millisecond)
				h.enqueue("a", "w2", 3) // a failed head keeps its lane: no successor is woken
				h.expired(c)
				return c.Item.WorkID, h.expireOp(c.Item.WorkID)
			}},
		{name: "operator cancel of a running item", from: db.StatusRunning, doc: docCancel, to: db.StatusCancelling,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
				return c.Item.WorkID, h.cancelOp(c.Item.WorkID)
			}},
		{name: "confirm cancelled, lane has a successor", from: db.StatusCancelling, doc: docConfirm, to: db.StatusCancelled, finished: true, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.cancelling()
				return c.Item.WorkID, func() (db.WorkItem, error) { return h.l.ConfirmCancelled(h.ctx, c) }
			}},
		{name: "fail with a cancel pending", from: db.StatusCancelling, doc: docConfirm, to: db.StatusCancelled, finished: true, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.cancelling()
				return c.Item.WorkID, func() (db.WorkItem, error) { return h.l.Fail(h.ctx, c, errFailure, 0) }
			}},
		{name: "snooze with a cancel pending", from: db.StatusCancelling, doc: docConfirm, to: db.StatusCancelled, finished: true, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.cancelling()
				return c.Item.WorkID, func() (db.WorkItem, error) { return h.l.Snooze(h.ctx, c, errFailure, time.Hour, 5) }
			}},
		{name: "lease expired with a cancel pending", from: db.StatusCancelling, doc: docConfirm, to: db.StatusCancelled, finished: true, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, 50*time.Millisecond)
				h.enqueue("a", "w2", 3)
				_, err := h.l.Cancel(h.ctx, c.Item.WorkID, c.Item.StateVersion)
				require.NoError(h.t, err)
				h.expired(c)
				return c.Item.WorkID, h.expireOp(c.Item.WorkID)
			}},
		{name: "operator cancel of a queued head, lane has a successor", from: db.StatusQueued, doc: docCancel, to: db.StatusCancelled, finished: true, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				item := h.enqueue("a", "w1", 3)
				h.enqueue("a", "w2", 3)
				return item.WorkID, h.cancelOp(item.WorkID)
			}},
		{name: "operator cancel of a queued item behind the head", from: db.StatusQueued, doc: docCancel, to: db.StatusCancelled, finished: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				h.enqueue("a", "w1", 3)
				item := h.enqueue("a", "w2", 3)
				return item.WorkID, h.cancelOp(item.WorkID)
			}},
		{name: "operator cancel of a retry_wait item, last of its lane", from: db.StatusRetryWait, doc: docCancel, to: db.StatusCancelled, finished: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
				_, err := h.l.Fail(h.ctx, c, errFailure, time.Hour)
				require.NoError(h.t, err)
				return c.Item.WorkID, h.cancelOp(c.Item.WorkID)
			}},
		{name: "operator cancel of a failed item, lane has a successor", from: db.StatusFailed, doc: docCancel, to: db.StatusCancelled, finished: true, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				id := h.failed()
				h.enqueue("a", "w2", 3)
				return id, h.cancelOp(id)
			}},
		{name: "operator retry", from: db.StatusFailed, doc: docRetry, to: db.StatusQueued, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				id := h.failed()
				return id, func() (db.WorkItem, error) { return h.l.Retry(h.ctx, id, h.version(id)) }
			}},
		{name: "maintenance re-queues its failed item", from: db.StatusFailed, doc: docRetry, to: db.StatusQueued, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				h.maintenance = true
				res, err := h.l.Enqueue(h.ctx, MaintenanceRequest())
				require.NoError(h.t, err)
				c := h.claim(res.Item.WorkID, time.Minute)
				_, err = h.l.Fail(h.ctx, c, Failure{Category: "test", Code: "boom"}, 0)
				require.NoError(h.t, err)
				return c.Item.WorkID, func() (db.WorkItem, error) {
					res, err := h.l.Enqueue(h.ctx, MaintenanceRequest())
					return res.Item, err
				}
			}},
		{name: "operator skip, lane has a successor", from: db.StatusFailed, doc: docSkip, to: db.StatusSucceeded, finished: true, claimable: true,
			run: func(h *wakeHarness) (string, func() (db.WorkItem, error)) {
				id := h.failed()
				h.enqueue("a", "w2", 3)
				return id, func() (db.WorkItem, error) {
					return h.l.Skip(h.ctx, id, h.version(id), func(context.Context, db.Queries, db.WorkItem) (Result, DomainCommit, error) {
						return Result{Code: ResultSkipped}, nil, nil
					})
				}
			}},
	}
}

// wakeHarness runs one case: a kind of its own (so claim passes see only the case's items) and lanes of its own.
type wakeHarness struct {
	t    *testing.T
	ctx  context.Context
	l    *Ledger
	kind string
	// maintenance: claim passes also take the maintenance item (one for the whole database)
	maintenance bool
}

func (h *wakeHarness) request(lane, window string, maxAttempts int32) EnqueueRequest {
	lk := sha256Hex(h.kind + "/" + lane)
	return EnqueueRequest{LaneKey: lk, Spec: func(context.Context, db.Queries) (*EnqueueSpec, error) {
		return &EnqueueSpec{Kind: h.kind, PayloadVersion: 1, ScopeID: "wake-test", LogicalKey: sha256Hex(lk + "/" + window),
			Payload: map[string]any{}, MaxAttempts: maxAttempts}, nil
	}}
}

func (h *wakeHarness) enqueue(lane, window string, maxAttempts int32) db.WorkItem {
	res, err := h.l.Enqueue(h.ctx, h.request(lane, window, maxAttempts))
	require.NoError(h.t, err)
	require.True(h.t, res.Created)
	return res.Item
}

func (h *wakeHarness) claimRequest(lease time.Duration) ClaimRequest {
	s := Supported{h.kind: {Min: 1, Max: 1}}
	if h.maintenance {
		s[KindMaintenance] = VersionRange{Min: 1, Max: 1}
	}
	return ClaimRequest{Owner: "wake-test", Supported: s, Slots: 8, Lease: lease}
}

// claim claims workID (the case's only due head).
func (h *wakeHarness) claim(workID string, lease time.Duration) Claim {
	res, err := h.l.Claim(h.ctx, h.claimRequest(lease))
	require.NoError(h.t, err)
	require.Len(h.t, res.Claims, 1)
	require.Equal(h.t, workID, res.Claims[0].Item.WorkID)
	return res.Claims[0]
}

func (h *wakeHarness) claimOp(workID string, lease time.Duration) func() (db.WorkItem, error) {
	return func() (db.WorkItem, error) {
		res, err := h.l.Claim(h.ctx, h.claimRequest(lease))
		if err != nil || len(res.Claims) != 1 {
			return db.WorkItem{}, fmt.Errorf("claimed %d items: %v", len(res.Claims), err)
		}
		return res.Claims[0].Item, nil
	}
}

// expired waits until the database clock is past the claim's lease.
func (h *wakeHarness) expired(c Claim) {
	require.Eventually(h.t, func() bool {
		now, err := h.l.Store().DBNow(h.ctx)
		return err == nil && now.After(c.LeaseExpiresAt)
	}, 10*time.Second, 10*time.Millisecond)
}

// expireOp is a claim pass that recovers workID's expired lease.
func (h *wakeHarness) expireOp(workID string) func() (db.WorkItem, error) {
	return func() (db.WorkItem, error) {
		res, err := h.l.Claim(h.ctx, h.claimRequest(time.Minute))
		if err != nil || res.Expired != 1 || len(res.Claims) != 0 {
			return db.WorkItem{}, fmt.Errorf("expired %d, claimed %d: %v", res.Expired, len(res.Claims), err)
		}
		return h.l.Get(h.ctx, workID)
	}
}

func (h *wakeHarness) version(workID string) int64 {
	item, err := h.l.Get(h.ctx, workID)
	require.NoError(h.t, err)
	return item.StateVersion
}

func (h *wakeHarness) cancelOp(workID string) func() (db.WorkItem, error) {
	return func() (db.WorkItem, error) { return h.l.Cancel(h.ctx, workID, h.version(workID)) }
}

// cancelling returns the claim of a cancelling head whose lane has a successor.
func (h *wakeHarness) cancelling() Claim {
	c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
	h.enqueue("a", "w2", 3)
	_, err := h.l.Cancel(h.ctx, c.Item.WorkID, c.Item.StateVersion)
	require.NoError(h.t, err)
	return c
}

// failed returns a failed head, the only item of its lane.
func (h *wakeHarness) failed() string {
	c := h.claim(h.enqueue("a", "w1", 3).WorkID, time.Minute)
	f := errFailure
	f.Retryable = false
	_, err := h.l.Fail(h.ctx, c, f, 0)
	require.NoError(h.t, err)
	return c.Item.WorkID
}

// notes listens on the database's channels (PostgreSQL) and tells what was notified between two barriers.
type notes struct {
	sqlDB *sql.DB
	got   chan [2]string
}

func listenNotes(t *testing.T, store db.Store, u dburl.URL) *notes {
	n := &notes{sqlDB: enginetest.OpenSQLDB(t, u), got: make(chan [2]string, 256)}
	t.Cleanup(func() { _ = n.sqlDB.Close() })
	connected := make(chan struct{}, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		_ = store.(db.Notifications).Listen(ctx, db.ListenHandlers{
			Connected: func() { connected <- struct{}{} },
			Notified:  func(ch, payload string) { n.got <- [2]string{ch, payload} },
		})
	}()
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener never connected")
	}
	return n
}

var barrierSeq atomic.Int64

// drain returns the channels notified since the last drain: it sends a barrier of its own and collects until the
// barrier arrives (notifications are delivered in commit order).
func (n *notes) drain(t *testing.T) []string {
	t.Helper()
	var payload string
	require.NoError(t, n.sqlDB.QueryRow(`SELECT current_schema() || $1`, fmt.Sprintf(":barrier-%d", barrierSeq.Add(1))).Scan(&payload))
	_, err := n.sqlDB.Exec(`SELECT pg_notify($1, $2)`, db.ChannelWorkFinished, payload)
	require.NoError(t, err)
	var chans []string
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-n.got:
			if got[1] == payload {
				return chans
			}
			if !strings.Contains(got[1], ":barrier-") && !slices.Contains(chans, got[0]) {
				chans = append(chans, got[0])
			}
		case <-deadline:
			t.Fatal("the barrier notification never arrived")
		}
	}
}

// TestTransitionsWake runs every transition of the state machine (wakeCases) on every engine and path and checks
// the wake-ups it sends: the item's Changed waiter is released by every one; this Ledger's workers are woken
// exactly when work became claimable; on PostgreSQL, pc_work_enqueued is notified exactly when work became
// claimable and pc_work_finished exactly when an item finished.
func TestTransitionsWake(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		u := enginetest.MigratedDatabase(t, engine)
		store := enginetest.OpenStore(t, u)
		var n *notes
		if engine == db.EnginePostgres {
			n = listenNotes(t, store, u)
		}
		for _, path := range []Path{PathSet, PathBatched, PathPerItem} {
			for i, tc := range wakeCases() {
				t.Run(fmt.Sprintf("path%d/%s", path, tc.name), func(t *testing.T) {
					l := NewLedger(store)
					l.SetPath(path)
					l.SetNotify(true)
					var woken atomic.Int32
					defer l.onEnqueued(func() { woken.Add(1) })()
					h := &wakeHarness{t: t, ctx: context.Background(), l: l, kind: fmt.Sprintf("wake.%d.%d", path, i)}
					workID, op := tc.run(h)
					if tc.from != "" {
						item, err := l.Get(h.ctx, workID)
						require.NoError(t, err)
						require.Equal(t, tc.from, item.Status, "the case's item is not in its from-state")
					}
					if n != nil {
						n.drain(t) // the setup's notifications
					}
					var changed <-chan struct{}
					if workID != "" {
						var stop func()
						changed, stop = l.Changed(workID)
						defer stop()
					}
					woken.Store(0)
					item, err := op()
					require.NoError(t, err)
					require.Equal(t, tc.to, item.Status)
					if changed != nil {
						select {
						case <-changed:
						default:
							t.Fatal("the item's waiter was not released")
						}
					}
					require.Equal(t, tc.claimable, woken.Load() > 0, "workers woken")
					if n != nil {
						var want []string
						if tc.claimable {
							want = append(want, db.ChannelWorkEnqueued)
						}
						if tc.finished {
							want = append(want, db.ChannelWorkFinished)
						}
						require.ElementsMatch(t, want, n.drain(t), "channels notified")
					}
				})
			}
		}
	})
}

// stateMachineRow matches one line of the diagram in docs/protocol.md#state-machine.
var stateMachineRow = regexp.MustCompile(`^(\S.*?)\s+── (.+?) ─+▶ (\w+)`)

// TestTransitionCasesCoverTheStateMachine holds wakeCases to the state machine as documented: every (from-state,
// operation, to-state) of the diagram has a case, and every case is such a transition.
func TestTransitionCasesCoverTheStateMachine(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	require.NoError(t, err)
	text := string(raw)
	start := strings.Index(text, "## State machine")
	require.GreaterOrEqual(t, start, 0)
	block := text[start:]
	block = block[strings.Index(block, "```")+3:]
	block = block[:strings.Index(block, "```")]
	type transition struct{ from, doc, to string }
	documented := map[transition]bool{}
	for _, line := range strings.Split(block, "\n") {
		m := stateMachineRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, from := range strings.Split(m[1], ",") {
			from = strings.TrimSpace(from)
			if from == "∅" {
				from = ""
			}
			documented[transition{from, m[2], m[3]}] = true
		}
	}
	require.Len(t, documented, 16, "the diagram's transitions, one per (from-state, operation)")
	covered := map[transition]bool{}
	for _, tc := range wakeCases() {
		tr := transition{tc.from, tc.doc, tc.to}
		require.True(t, documented[tr], "case %q is no transition of the state machine: %+v", tc.name, tr)
		covered[tr] = true
	}
	for tr := range documented {
		require.True(t, covered[tr], "no case for %+v", tr)
	}
}

// wakePrimitives are the calls that send a wake-up: the in-process signals, the pacer and the notifications.
var wakePrimitives = map[string]bool{"notify": true, "notifyAll": true, "wakeWorkers": true, "Wake": true,
	"note": true, "kick": true, "release": true, "Notify": true, "NotifyOnCommit": true, "AfterTx": true,
	"notifyOnCommit": true, "wakeInProcess": true}

// TestOnlyTransitionsSendWakeups: no non-test file of the package but transition.go calls a wake-up primitive; the
// one exception is Listen, the receiving end, which relays another process's notifications to this one's waiters.
func TestOnlyTransitionsSendWakeups(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "transition.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		checked++
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(node ast.Node) bool {
				call, ok := node.(*ast.CallExpr)
				if !ok {
					return true
				}
				var callee string
				switch f := call.Fun.(type) {
				case *ast.SelectorExpr:
					callee = f.Sel.Name
				case *ast.Ident:
					callee = f.Name
				}
				if !wakePrimitives[callee] {
					return true
				}
				if name == "wakeup.go" && fn.Name.Name == "Listen" && (callee == "wakeWorkers" || callee == "notifyAll") {
					return true
				}
				t.Errorf("%s: %s calls %s: wake-ups are derived from transitions (transition.go)", fset.Position(call.Pos()), fn.Name.Name, callee)
				return true
			})
		}
	}
	require.Greater(t, checked, 10)
}
