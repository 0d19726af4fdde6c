package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

type env struct {
	store   db.Store
	ledger  *coordinator.Ledger
	journal *sources.Journal
	handler *memory.Handler
	cons    sources.Consumer
}

func newEnv(t *testing.T, s db.Store) *env {
	return &env{store: s, ledger: coordinator.NewLedger(s), journal: sources.NewJournal(s),
		handler: &memory.Handler{Store: s, Provider: provider.NewLocal()}, cons: memory.Consumer(5)}
}

func (e *env) capture(t *testing.T, scope string, n int, meta string) {
	t.Helper()
	for i := range n {
		_, err := e.journal.Capture(context.Background(), sources.CaptureRequest{ScopeID: scope,
			Content: fmt.Sprintf("Fact number %d about %s is true.", i, scope), Metadata: json.RawMessage(meta)})
		require.NoError(t, err)
	}
}

// runOne claims one item and runs it through the handler like the worker does.
func (e *env) runOne(t *testing.T, h coordinator.Handler) db.WorkItem {
	t.Helper()
	ctx := context.Background()
	res, err := e.ledger.Claim(ctx, coordinator.ClaimRequest{Owner: "test-worker", Supported: coordinator.Supported{h.Kind(): h.PayloadVersions()}, Slots: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, res.Claims, 1)
	p, err := h.Prepare(ctx, res.Claims[0].Item)
	require.NoError(t, err)
	done, err := e.ledger.Complete(ctx, res.Claims[0], p.Result, p.Commit)
	require.NoError(t, err)
	return done
}

// windows reads the (after, through] window of every Memory revision of scope, in revision order.
func windows(t *testing.T, s db.Store, scope string) [][2]int64 {
	sqlDB := enginetest.OpenSQLDB(t, enginetest.URLOf(t, s))
	rows, err := sqlDB.Query("SELECT window_after, window_through FROM pc_memory_revisions WHERE scope_id = '" + scope + "' ORDER BY revision")
	require.NoError(t, err)
	defer rows.Close()
	var out [][2]int64
	for rows.Next() {
		var w [2]int64
		require.NoError(t, rows.Scan(&w[0], &w[1]))
		out = append(out, w)
	}
	require.NoError(t, rows.Err())
	return out
}

func TestManualAndScheduledFlushJoinOneItem(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		e.capture(t, "scope-a", 3, "")
		manual, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("scope-a"))
		require.NoError(t, err)
		require.True(t, manual.Created)

		var joined []coordinator.EnqueueResult
		sched, err := coordinator.NewScheduler(e.ledger, coordinator.SchedulerConfig{Owner: "sched", Lease: time.Minute,
			Hooks: coordinator.SchedulerHooks{Enqueued: func(_ string, r coordinator.EnqueueResult) { joined = append(joined, r) }}},
			sources.Discoverer{Consumer: e.cons, Store: s, Every: time.Hour, Label: "memory"})
		require.NoError(t, err)
		require.NoError(t, sched.Tick(ctx))
		require.Len(t, joined, 1)
		require.False(t, joined[0].Created)
		require.Equal(t, manual.Item.WorkID, joined[0].Item.WorkID)

		done := e.runOne(t, e.handler)
		require.Equal(t, "processed", done.ResultCode)
		require.Equal(t, [][2]int64{{0, 3}}, windows(t, s, "scope-a"))

		f := memory.Flusher{Ledger: e.ledger, Consumer: e.cons}
		out, err := f.Flush(ctx, "scope-a", 0)
		require.NoError(t, err)
		require.Equal(t, memory.FlushIdle, out.Status)
		require.Equal(t, int64(3), out.Result.CurrentCursor)
		require.Equal(t, int64(3), out.Result.HighWatermark)
		require.Equal(t, int64(1), out.Result.Memory.Revision)
	})
}

func TestWindowsCommitInOrderExactlyOnce(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		e.capture(t, "scope", 250, "")
		for range 3 {
			res, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("scope"))
			require.NoError(t, err)
			require.True(t, res.Created)
			e.runOne(t, e.handler)
		}
		idle, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("scope"))
		require.NoError(t, err)
		require.True(t, idle.Idle)
		require.Equal(t, [][2]int64{{0, 100}, {100, 200}, {200, 250}}, windows(t, s, "scope"))
		mem, err := memory.Reader{Store: s}.Current(ctx, "scope")
		require.NoError(t, err)
		require.Equal(t, int64(3), mem.Revision)
		require.Len(t, mem.Entries, 250)
		var pos []int64
		require.NoError(t, json.Unmarshal(mem.Entries[249].SourcePositions, &pos))
		require.Equal(t, []int64{250}, pos)
		found, err := memory.Reader{Store: s}.Search(ctx, "scope", "NUMBER 42 ", 10)
		require.NoError(t, err)
		require.Len(t, found.Entries, 1)
	})
}

func TestLostResponseEndsAlreadyCommitted(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		e.capture(t, "scope", 5, "")
		_, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("scope"))
		require.NoError(t, err)
		sup := coordinator.Supported{memory.Kind: e.handler.PayloadVersions()}
		res, err := e.ledger.Claim(ctx, coordinator.ClaimRequest{Owner: "w1", Supported: sup, Slots: 1, Lease: 200 * time.Millisecond})
		require.NoError(t, err)
		require.Len(t, res.Claims, 1)
		p, err := e.handler.Prepare(ctx, res.Claims[0].Item)
		require.NoError(t, err)
		// The domain commit lands but the worker "crashes" before the ledger hears of it.
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			now, err := q.DBNow(ctx)
			if err != nil {
				return err
			}
			return p.Commit(ctx, q, res.Claims[0].Item, now)
		}))
		testutil.WaitDBPast(t, s, res.Claims[0].LeaseExpiresAt) // lease expiry is judged on the database clock only
		exp, err := e.ledger.Claim(ctx, coordinator.ClaimRequest{Owner: "w2", Supported: sup, Slots: 1, Lease: time.Minute})
		require.NoError(t, err)
		require.Equal(t, 1, exp.Expired)
		done := e.runOne(t, e.handler)
		require.Equal(t, "already_committed", done.ResultCode)
		require.Equal(t, [][2]int64{{0, 5}}, windows(t, s, "scope"), "nothing new was written")
	})
}

// TestFlushDuringCommitCannotCreateAStaleWindow interleaves a commit and a flush: the flush's enqueue waits for
// the committing transaction's lane lock and computes its window from the advanced cursor, so no poison window
// (a window whose after is behind the cursor) is ever created.
func TestFlushDuringCommitCannotCreateAStaleWindow(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		e.capture(t, "scope", 10, "")
		_, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("scope"))
		require.NoError(t, err)
		sup := coordinator.Supported{memory.Kind: e.handler.PayloadVersions()}
		res, err := e.ledger.Claim(ctx, coordinator.ClaimRequest{Owner: "w1", Supported: sup, Slots: 1, Lease: time.Minute})
		require.NoError(t, err)
		p, err := e.handler.Prepare(ctx, res.Claims[0].Item)
		require.NoError(t, err)
		e.capture(t, "scope", 5, "") // more Sources arrive while the model call ran

		inCommit, release := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.ledger.Complete(ctx, res.Claims[0], p.Result, func(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time) error {
				if err := p.Commit(ctx, q, item, now); err != nil {
					return err
				}
				close(inCommit)
				<-release // hold the lane lock with the cursor advanced but not yet committed
				return nil
			})
			require.NoError(t, err)
		}()
		<-inCommit
		flushed := make(chan coordinator.EnqueueResult, 1)
		go func() {
			r, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("scope"))
			require.NoError(t, err)
			flushed <- r
		}()
		select {
		case <-flushed:
			t.Fatal("the enqueue did not wait for the lane lock")
		case <-time.After(300 * time.Millisecond):
		}
		close(release)
		wg.Wait()
		r := <-flushed
		require.True(t, r.Created)
		var pl sources.WindowPayload
		require.NoError(t, json.Unmarshal(r.Item.Payload, &pl))
		require.Equal(t, int64(10), pl.After, "the window starts at the committed cursor")
		require.Equal(t, int64(15), pl.Through)
		done := e.runOne(t, e.handler)
		require.Equal(t, "processed", done.ResultCode)
		require.Equal(t, [][2]int64{{0, 10}, {10, 15}}, windows(t, s, "scope"))
	})
}

func TestExperienceCandidatesOncePerWindow(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		e.capture(t, "scope", 2, "")
		e.capture(t, "scope", 1, `{"kind":"task-outcome","title":"Use the staging DB"}`)
		cons := experience.Consumer(5)
		h := &experience.Handler{Store: s, Provider: provider.NewLocal()}
		disc := sources.Discoverer{Consumer: cons, Store: s, Every: time.Hour, Label: "experience"}
		sched, err := coordinator.NewScheduler(e.ledger, coordinator.SchedulerConfig{Owner: "sched", Lease: time.Minute}, disc)
		require.NoError(t, err)
		require.NoError(t, sched.Tick(ctx))
		done := e.runOne(t, h)
		require.Equal(t, "processed", done.ResultCode)
		cands, err := experience.Reviews{Store: s}.List(ctx, "scope", "", 10)
		require.NoError(t, err)
		require.Len(t, cands, 1)
		require.Equal(t, experience.StatusPending, cands[0].Status)
		require.Equal(t, "Use the staging DB", cands[0].Title)

		// A restarted scheduler rescans from scratch: nothing new is enqueued or committed.
		tok, _ := sched.Leader()
		require.NoError(t, e.ledger.ReleaseLease(ctx, tok))
		restarted, err := coordinator.NewScheduler(e.ledger, coordinator.SchedulerConfig{Owner: "sched-2", Lease: time.Minute}, disc)
		require.NoError(t, err)
		_, err = s.SchedulerScanUpdate(ctx, db.SchedulerScanUpdateParams{Scan: db.SchedulerScan{Discoverer: "experience", NextRunAt: time.Unix(0, 0).UTC(), StateVersion: 3, UpdatedAt: time.Now()}, ExpectedVersion: 2})
		require.NoError(t, err)
		require.NoError(t, restarted.Tick(ctx))
		res, err := e.ledger.Claim(ctx, coordinator.ClaimRequest{Owner: "w", Supported: coordinator.Supported{experience.Kind: h.PayloadVersions()}, Slots: 1, Lease: time.Minute})
		require.NoError(t, err)
		require.Empty(t, res.Claims)
		cands, err = experience.Reviews{Store: s}.List(ctx, "scope", "", 10)
		require.NoError(t, err)
		require.Len(t, cands, 1, "no duplicate candidate")

		approved, err := experience.Reviews{Store: s}.Review(ctx, cands[0].CandidateID, 1, true)
		require.NoError(t, err)
		require.Equal(t, experience.StatusApproved, approved.Status)
		_, err = experience.Reviews{Store: s}.Review(ctx, cands[0].CandidateID, 1, false)
		var conflict *experience.ErrCandidateConflict
		require.True(t, errors.As(err, &conflict))
	})
}

// TestProviderKeyNeverStored runs a flush through the worker with an OpenAI-compatible provider that fails once
// with an error body carrying canaries; none of them reaches a log line or a ledger row.
func TestProviderKeyNeverStored(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		const keyCanary, errCanary, contentCanary = "sk-KEYCANARY-91f2", "ERRCANARY-77a1", "CONTENTCANARY-5c3e"
		calls := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls++
			if calls == 1 {
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprintf(w, `{"error":"%s %s"}`, errCanary, r.Header.Get("Authorization"))
				return
			}
			fmt.Fprint(w, `{"choices":[{"message":{"content":"{\"operations\":[{\"op\":\"add\",\"entry_id\":null,\"content\":\"a fact\",\"source_positions\":[1]}]}"}}]}`)
		}))
		defer srv.Close()
		oa, err := provider.NewOpenAI(provider.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m", APIKey: keyCanary, Timeout: 2 * time.Second})
		require.NoError(t, err)
		var logs bytes.Buffer
		log := zerolog.New(&logs)
		e := newEnv(t, s)
		_, err = e.journal.Capture(context.Background(), sources.CaptureRequest{ScopeID: "scope", Content: "secret " + contentCanary})
		require.NoError(t, err)
		w, err := coordinator.NewWorker(e.ledger, coordinator.WorkerConfig{Owner: "w", Concurrency: 1, Poll: 20 * time.Millisecond,
			RetryBase: time.Millisecond, RetryMax: 5 * time.Millisecond, Logger: log}, &memory.Handler{Store: s, Provider: oa})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		f := memory.Flusher{Ledger: e.ledger, Consumer: e.cons, Wake: w.Wake}
		out, err := f.Flush(context.Background(), "scope", 20*time.Second)
		require.NoError(t, err)
		require.Equal(t, memory.FlushProcessed, out.Status)
		cancel()
		require.NoError(t, <-done)

		var rows strings.Builder
		items, err := e.ledger.List(context.Background(), coordinator.ListParams{Kinds: []string{memory.Kind}, Limit: 10})
		require.NoError(t, err)
		for _, it := range items {
			fmt.Fprintf(&rows, "%+v %s %s\n", it, it.Payload, it.ResultPayload)
			attempts, err := e.ledger.Attempts(context.Background(), it.WorkID)
			require.NoError(t, err)
			require.Len(t, attempts, 2)
			require.Equal(t, "provider", attempts[0].ErrorCategory)
			require.Equal(t, "unavailable", attempts[0].ErrorCode)
			fmt.Fprintf(&rows, "%+v\n", attempts)
		}
		for _, canary := range []string{keyCanary, errCanary, contentCanary} {
			require.NotContains(t, logs.String(), canary)
			require.NotContains(t, rows.String(), canary)
		}
	})
}
