package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/powercontext/powercontext/db"
)

// noopArgs is River's no-op job.
type noopArgs struct {
	N int `json:"n"`
	// Key is the item's logical key (the ledger's LogicalKey), set in the unique runs only.
	Key string `json:"key,omitempty"`
}

func (noopArgs) Kind() string { return "bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// runRiverB1 measures the same workload on River (same PostgreSQL server, same run): E inserter goroutines call
// client.Insert (one transaction per job, like one Enqueue per item) or, with cfg.bulk, client.InsertMany (cfg.bulk
// jobs per transaction, like one EnqueueMany) on an insert-only client with its own pool,
// while W River clients with MaxWorkers = C each (own pools) work the jobs with a no-op worker. Completion is
// counted from River's job-completed events (after its completer has written them), as River's own benchmark does.
// Fetch tuning is River's own benchmark's: FetchCooldown 2 ms, FetchPollInterval 20 ms. River's tables live in a
// fresh schema created by rivermigrate.
func runRiverB1(ctx context.Context, srv *servers, cfg b1Config) (res b1Result) {
	res = b1Result{system: "river", engine: db.EnginePostgres, lanes: 0, n: cfg.n, workers: cfg.workers, slots: cfg.slots, bulk: cfg.bulk, unique: cfg.unique}
	schema := newName("pcb_river")
	if _, err := srv.pgAdmin.ExecContext(ctx, `CREATE SCHEMA "`+schema+`"`); err != nil {
		res.err = err
		return res
	}
	defer func() {
		_, _ = srv.pgAdmin.ExecContext(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
	}()
	// Rows written, read before the first insert and after every client has stopped and every pool has been closed
	// (the deferred stops and closes below run first).
	rows := pgRowsWritten(srv.pgAdmin, schema)
	var rows0 int64
	rowsStarted := false
	defer func() {
		if !rowsStarted || res.err != nil {
			return
		}
		if n, err := settledRows(ctx, rows, srv.pgAdmin); err == nil {
			res.rowsPerItem, res.rowsOK = float64(n-rows0)/float64(cfg.n), true
		} else {
			res.rowsErr = err
		}
	}()
	var pools []*pgxpool.Pool
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	cnt := &counter{}
	newPool := func(maxConns int) (*pgxpool.Pool, error) {
		pc, err := pgxpool.ParseConfig(srv.pgDSN)
		if err != nil {
			return nil, err
		}
		pc.MaxConns = int32(maxConns)
		pc.ConnConfig.Tracer = cnt
		p, err := pgxpool.NewWithConfig(ctx, pc)
		if err != nil {
			return nil, err
		}
		pools = append(pools, p)
		return p, p.Ping(ctx)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	insertPool, err := newPool(cfg.enqueuers + 2)
	if err != nil {
		res.err = err
		return res
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(insertPool), &rivermigrate.Config{Schema: schema, Logger: logger})
	if err != nil {
		res.err = err
		return res
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		res.err = fmt.Errorf("river migrate: %w", err)
		return res
	}

	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{})
	inserter, err := river.NewClient(riverpgxv5.New(insertPool), &river.Config{Schema: schema, Workers: workers, Logger: logger})
	if err != nil {
		res.err = err
		return res
	}

	var done atomic.Int64
	allDone := make(chan struct{})
	var clients []*river.Client[pgx.Tx]
	var subWG sync.WaitGroup
	subCtx, subStop := context.WithCancel(ctx)
	defer subStop()
	for range cfg.workers {
		p, err := newPool(cfg.slots + 2)
		if err != nil {
			res.err = err
			return res
		}
		c, err := river.NewClient(riverpgxv5.New(p), &river.Config{
			Schema: schema, Workers: workers, Logger: logger,
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.slots}},
			FetchCooldown:     2 * time.Millisecond,
			FetchPollInterval: 20 * time.Millisecond,
		})
		if err != nil {
			res.err = err
			return res
		}
		events, cancel := c.SubscribeConfig(&river.SubscribeConfig{ChanSize: cfg.n + 100,
			Kinds: []river.EventKind{river.EventKindJobCompleted}})
		defer cancel()
		subWG.Add(1)
		go func() {
			defer subWG.Done()
			for {
				select {
				case <-subCtx.Done():
					return
				case ev, ok := <-events:
					if !ok {
						return
					}
					if ev.Kind == river.EventKindJobCompleted && done.Add(1) == int64(cfg.n) {
						close(allDone)
					}
				}
			}
		}()
		clients = append(clients, c)
	}
	for _, c := range clients {
		if err := c.Start(ctx); err != nil {
			res.err = err
			return res
		}
	}
	defer func() {
		for _, c := range clients {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = c.Stop(sctx)
			cancel()
		}
		subStop()
		subWG.Wait()
	}()
	time.Sleep(100 * time.Millisecond)

	if rows0, err = rows(ctx); err == nil {
		rowsStarted = true
	} else {
		res.rowsErr = err
	}
	trips0 := cnt.load()
	srv0, srvOK := serverCPU(db.EnginePostgres)
	self0 := selfCPU()
	start := time.Now()
	var enqWG sync.WaitGroup
	var enqErr atomic.Value
	for g := range cfg.enqueuers {
		enqWG.Add(1)
		go func() {
			defer enqWG.Done()
			if cfg.bulk > 0 { // the same batches as the ledger's bulk run, one InsertMany transaction each
				for first := g * cfg.bulk; first < cfg.n; first += cfg.enqueuers * cfg.bulk {
					params := make([]river.InsertManyParams, 0, cfg.bulk)
					for i := first; i < min(first+cfg.bulk, cfg.n); i++ {
						args, opts := riverJob(cfg, i)
						params = append(params, river.InsertManyParams{Args: args, InsertOpts: opts})
					}
					if _, err := inserter.InsertMany(ctx, params); err != nil {
						enqErr.CompareAndSwap(nil, err)
						return
					}
				}
				return
			}
			for i := g; i < cfg.n; i += cfg.enqueuers {
				args, opts := riverJob(cfg, i)
				if _, err := inserter.Insert(ctx, args, opts); err != nil {
					enqErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	enqWG.Wait()
	res.enqueued = time.Since(start)
	if v := enqErr.Load(); v != nil {
		res.err = fmt.Errorf("insert: %w", v.(error))
		return res
	}
	select {
	case <-allDone:
	case <-time.After(10 * time.Minute):
		res.err = fmt.Errorf("timed out with %d of %d jobs done", done.Load(), cfg.n)
		res.timedOut, res.total = true, time.Since(start)
		res.perSecond = float64(done.Load()) / res.total.Seconds()
		return res
	case <-ctx.Done():
		res.err = ctx.Err()
		return res
	}
	res.total = time.Since(start)
	res.perSecond = float64(cfg.n) / res.total.Seconds()
	res.tripsPerItem, res.tripsOK = float64(cnt.load()-trips0)/float64(cfg.n), true
	res.serverCPU, res.clientCPU, res.serverOK = cpuPerItem(db.EnginePostgres, srv0, srvOK, self0, cfg.n)
	return res
}

// riverJob is job i's args and insert options: plain, or (cfg.unique) carrying item i's logical key (the ledger's
// LogicalKey of item i) with UniqueOpts{ByArgs: true}, River's uniqueness by a hash of the encoded args.
func riverJob(cfg b1Config, i int) (noopArgs, *river.InsertOpts) {
	if !cfg.unique {
		return noopArgs{N: i}, nil
	}
	return noopArgs{N: i, Key: hash("item/" + strconv.Itoa(i))}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}
