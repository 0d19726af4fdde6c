package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

const noopKind = "bench.noop"

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// noopHandler prepares nothing and commits nothing: the measured cost is the ledger's own.
type noopHandler struct{}

func (noopHandler) Kind() string { return noopKind }
func (noopHandler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: 1, Max: 1}
}
func (noopHandler) Prepare(context.Context, db.WorkItem) (coordinator.Prepared, error) {
	return coordinator.Prepared{Result: coordinator.Result{Code: "processed"}}, nil
}

// enqueueNoop enqueues item i of lane (one transaction, the real Enqueue path).
func enqueueNoop(ctx context.Context, l *coordinator.Ledger, lane string, i int) (coordinator.EnqueueResult, error) {
	return l.Enqueue(ctx, noopRequest(lane, i))
}

// noopRequest is the enqueue of no-op item i on lane.
func noopRequest(lane string, i int) coordinator.EnqueueRequest {
	return coordinator.EnqueueRequest{
		LaneKey: hash("lane/" + lane),
		Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
			return &coordinator.EnqueueSpec{Kind: noopKind, PayloadVersion: 1, ScopeID: "scope-" + lane,
				LogicalKey: hash("item/" + strconv.Itoa(i)), Payload: map[string]any{"n": i}, MaxAttempts: 5}, nil
		},
	}
}

// enqueueNoopBatch enqueues items [from, to) (item i in lane i mod lanes) as one bulk enqueue (Ledger.EnqueueMany:
// one transaction).
func enqueueNoopBatch(ctx context.Context, l *coordinator.Ledger, lanes, from, to int) error {
	reqs := make([]coordinator.EnqueueRequest, 0, to-from)
	for i := from; i < to; i++ {
		reqs = append(reqs, noopRequest(strconv.Itoa(i%lanes), i))
	}
	_, err := l.EnqueueMany(ctx, reqs)
	return err
}

// b1Config is one throughput run.
type b1Config struct {
	n         int
	lanes     int
	workers   int
	slots     int
	enqueuers int
	poll      time.Duration
	// completeDelay is the ledger workers' completer window.
	completeDelay time.Duration
	// bulk is the number of items per enqueue transaction (River InsertMany, ledger EnqueueMany); 0 = one item
	// per transaction (River Insert, ledger Enqueue).
	bulk int
	// unique: River inserts with UniqueOpts{ByArgs: true}, the args carrying the item's logical key (every ledger
	// item has one).
	unique bool
}

// variant names the run's settings for the report and the JSON figures.
func (c b1Config) variant() string {
	v := fmt.Sprintf("W=%d×C=%d", c.workers, c.slots)
	if c.bulk > 0 {
		v += fmt.Sprintf(", bulk %d/tx", c.bulk)
	}
	if c.unique {
		v += ", unique ByArgs"
	}
	return v
}

// b1Result is one throughput measurement.
type b1Result struct {
	system    string // "ledger", "river" or "graphile"
	engine    db.Engine
	lanes     int
	n         int
	workers   int
	slots     int
	bulk      int
	unique    bool          // River: UniqueOpts{ByArgs: true}
	mode      string        // Graphile Worker: "default" or "batched"
	total     time.Duration // first enqueue → last completion
	enqueued  time.Duration // first enqueue → last enqueue returned
	perSecond float64
	// tripsPerItem is every database round trip of the run (enqueues, claim passes including empty and lost ones,
	// completes) divided by N: the amortised cost the workers really paid, next to B4's single-item count.
	tripsPerItem float64
	// serverCPU and clientCPU are the CPU time the database server's processes and this benchmark process used
	// during the run, divided by N (serverOK false: not measured).
	serverCPU, clientCPU time.Duration
	serverOK             bool
	// rowsPerItem is the rows written (inserted + updated + deleted) during the run divided by N (rowsOK false: not
	// measured): pg_stat_user_tables of the run's schema on PostgreSQL, the server-wide Handler_write/update/delete
	// on MariaDB.
	rowsPerItem float64
	// writes is rowsPerItem by table, with PostgreSQL's HOT updates (PostgreSQL ledger runs only).
	writes []tableWrites
	// statements is the -statements profile (database/sql engines).
	statements string
	rowsOK     bool
	rowsErr    error // why rows written could not be read
	// tripsOK false: round trips not counted (Graphile Worker runs in another process).
	tripsOK bool
	// order is the Graphile Worker order check's verdict ("" = not checked).
	order string
	// timedOut: the run did not finish in 10 minutes; perSecond is then the rate of the items done until then.
	timedOut bool
	err      error
}

// runLedgerB1 measures N no-op items end to end through the real coordinator: E enqueuer goroutines call
// Ledger.Enqueue (one transaction per item, item i in lane i mod L) while W coordinator.Workers with C slots each
// claim and complete them. Every worker and the enqueuers have their own store (their own pool, like separate
// processes) on PostgreSQL and MariaDB; SQLite runs single_node, so they share one store. Enqueuers wake the
// workers in process (what the API's flush does); workers also poll every cfg.poll.
func runLedgerB1(ctx context.Context, srv *servers, engine db.Engine, cfg b1Config) (res b1Result) {
	res = b1Result{system: "ledger", engine: engine, lanes: cfg.lanes, n: cfg.n, workers: cfg.workers, slots: cfg.slots, bulk: cfg.bulk}
	bdb, err := srv.createDB(ctx, engine)
	if err != nil {
		res.err = err
		return res
	}
	defer bdb.drop()

	// Rows written: read before the first enqueue and, after every store of the run has been closed (the deferred
	// close below runs first), once the statistics have settled.
	rows := ledgerRows(srv, bdb)
	var rows0 int64
	var tables0 map[string][4]int64 // per-table counts at the start (PostgreSQL)
	rowsStarted := false
	defer func() {
		if rows == nil || !rowsStarted || res.err != nil {
			return
		}
		var pg = srv.pgAdmin
		if engine != db.EnginePostgres {
			pg = nil
		}
		if n, err := settledRows(ctx, rows, pg); err == nil {
			res.rowsPerItem, res.rowsOK = float64(n-rows0)/float64(cfg.n), true
		} else {
			res.rowsErr = err
		}
		if tables0 != nil {
			if tables, err := pgTableWrites(ctx, srv.pgAdmin, bdb.name); err == nil {
				res.writes = perItemWrites(tables0, tables, cfg.n)
			}
		}
	}()

	var stores []db.Store
	defer func() {
		for _, s := range stores {
			_ = s.Close()
		}
	}()
	cnt := &counter{}
	const ledgerWorkerMaxConns = 20
	open := func(maxConns int) (db.Store, error) {
		s, err := openStore(ctx, bdb, storeOptions{maxConns: maxConns, counter: cnt})
		if err == nil {
			stores = append(stores, s)
		}
		return s, err
	}
	apiStore, err := open(cfg.enqueuers + 2)
	if err != nil {
		res.err = err
		return res
	}
	apiLedger := coordinator.NewLedger(apiStore)

	var done atomic.Int64
	allDone := make(chan struct{})
	hooks := coordinator.WorkerHooks{
		StartAttempt: func(ctx context.Context, _ coordinator.Claim) (context.Context, func(string, string)) {
			return ctx, func(outcome, _ string) {
				if outcome == db.OutcomeSucceeded && done.Add(1) == int64(cfg.n) {
					close(allDone)
				}
			}
		},
	}
	workers := make([]*coordinator.Worker, cfg.workers)
	for i := range workers {
		store := apiStore
		if engine != db.EngineSQLite {
			// One connection per slot in flight plus two, capped so the wide run (W=4 × C=32) stays under
			// PostgreSQL's default max_connections (100): uncapped, 4 × 34 connections exhausted the server and the
			// run stalled on "too many clients". The cap can only slow the ledger, never the peer.
			if store, err = open(min(cfg.slots+2, ledgerWorkerMaxConns)); err != nil {
				res.err = err
				return res
			}
		}
		workers[i], err = coordinator.NewWorker(coordinator.NewLedger(store), coordinator.WorkerConfig{
			Owner: fmt.Sprintf("pcbench-worker-%d", i), Concurrency: cfg.slots, Poll: cfg.poll,
			Lease: time.Minute, Heartbeat: 15 * time.Second, ShutdownGrace: 30 * time.Second, CompleteDelay: cfg.completeDelay,
			Logger: zerolog.Nop(), Hooks: hooks,
		}, noopHandler{})
		if err != nil {
			res.err = err
			return res
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for _, w := range workers {
		wg.Add(1)
		go func() { defer wg.Done(); _ = w.Run(runCtx) }()
	}
	time.Sleep(100 * time.Millisecond) // let the workers make their first (empty) claim pass

	if rows != nil {
		if rows0, err = rows(ctx); err == nil {
			rowsStarted = true
			if engine == db.EnginePostgres {
				tables0, _ = pgTableWrites(ctx, srv.pgAdmin, bdb.name)
			}
		} else {
			res.rowsErr = err
		}
	}
	srv0, srvOK := serverCPU(engine)
	self0 := selfCPU()
	start := time.Now()
	var enqWG sync.WaitGroup
	var enqErr atomic.Value
	for g := range cfg.enqueuers {
		enqWG.Add(1)
		go func() {
			defer enqWG.Done()
			if cfg.bulk > 0 { // batch b holds items b·bulk … (b+1)·bulk−1; enqueuer g takes every E-th batch
				for first := g * cfg.bulk; first < cfg.n; first += cfg.enqueuers * cfg.bulk {
					if err := enqueueNoopBatch(ctx, apiLedger, cfg.lanes, first, min(first+cfg.bulk, cfg.n)); err != nil {
						enqErr.CompareAndSwap(nil, err)
						return
					}
					for _, w := range workers {
						w.Wake()
					}
				}
				return
			}
			for i := g; i < cfg.n; i += cfg.enqueuers {
				if _, err := enqueueNoop(ctx, apiLedger, strconv.Itoa(i%cfg.lanes), i); err != nil {
					enqErr.CompareAndSwap(nil, err)
					return
				}
				for _, w := range workers {
					w.Wake()
				}
			}
		}()
	}
	enqWG.Wait()
	res.enqueued = time.Since(start)
	if v := enqErr.Load(); v != nil {
		res.err = fmt.Errorf("enqueue: %w", v.(error))
		return res
	}
	timeout := time.After(10 * time.Minute)
	select {
	case <-allDone:
	case <-timeout:
		res.err = fmt.Errorf("timed out with %d of %d items done", done.Load(), cfg.n)
		res.timedOut, res.total = true, time.Since(start)
		res.perSecond = float64(done.Load()) / res.total.Seconds()
		return res
	case <-ctx.Done():
		res.err = ctx.Err()
		return res
	}
	res.total = time.Since(start)
	res.perSecond = float64(cfg.n) / res.total.Seconds()
	res.tripsPerItem, res.tripsOK = float64(cnt.load())/float64(cfg.n), true
	if profileStatements && engine != db.EnginePostgres {
		res.statements = cnt.stmts.summary(cfg.n)
	}
	res.serverCPU, res.clientCPU, res.serverOK = cpuPerItem(engine, srv0, srvOK, self0, cfg.n)

	// Sanity check: every item succeeded exactly once.
	stats, err := apiStore.WorkItemQueueStatistics(ctx)
	if err != nil {
		res.err = err
		return res
	}
	for _, s := range stats {
		if s.Count > 0 {
			res.err = fmt.Errorf("%d items left in status %s", s.Count, s.Status)
		}
	}
	return res
}

// cpuPerItem is the server's and this process's CPU time since srv0 and self0, per item.
func cpuPerItem(engine db.Engine, srv0 time.Duration, srvOK bool, self0 time.Duration, n int) (server, client time.Duration, ok bool) {
	srv1, ok1 := serverCPU(engine)
	client = (selfCPU() - self0) / time.Duration(n)
	if !srvOK || !ok1 {
		return 0, client, false
	}
	return (srv1 - srv0) / time.Duration(n), client, true
}
