package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// b3Result is the flush API's latency at one client count.
type b3Result struct {
	clients, requests  int
	p50, p90, p99, max time.Duration // request latency
	ovP50, ovP99       time.Duration // overhead: latency minus the item's ledger time (completed_at − created_at)
	rps                float64
	err                error
}

func (r b3Result) summary() string {
	if r.err != nil {
		return "error: " + r.err.Error()
	}
	return fmt.Sprintf("p50 %s p90 %s p99 %s max %s, overhead p50 %s p99 %s, %.0f req/s", ms(r.p50), ms(r.p90), ms(r.p99), ms(r.max), ms(r.ovP50), ms(r.ovP99), r.rps)
}

// b3Worker is the worker configuration of B3: the service defaults (docs/architecture.md#configuration) except nothing.
const (
	b3Concurrency = 4
	b3MaxAttempts = 5
)

// runB3 serves the real Echo handlers (handlers.New) over a PostgreSQL store on a loopback listener, with a
// coordinator.Worker running the memory handler on the local provider in the same process (what app.Start wires for
// role all; single_node itself requires SQLite, so the pieces are started here directly). The store is opened as
// the service opens it (dbopen defaults: pgx's default pool size). Each client owns one scope; before every timed
// flush it captures one Source into it (untimed), so each flush has exactly one new window to process.
func runB3(ctx context.Context, srv *servers, clients, requests int) b3Result {
	res := b3Result{clients: clients}
	bdb, err := srv.createDB(ctx, db.EnginePostgres)
	if err != nil {
		res.err = err
		return res
	}
	defer bdb.drop()
	store, err := openStore(ctx, bdb, storeOptions{})
	if err != nil {
		res.err = err
		return res
	}
	defer store.Close()
	ledger := coordinator.NewLedger(store)
	prov := provider.NewLocal()
	worker, err := coordinator.NewWorker(ledger, coordinator.WorkerConfig{Owner: "pcbench-b3", Concurrency: b3Concurrency,
		Logger: zerolog.Nop()},
		&memory.Handler{Store: store, Provider: prov},
		&experience.Handler{Store: store, Provider: prov},
	)
	if err != nil {
		res.err = err
		return res
	}
	journal := sources.NewJournal(store)
	deps := handlers.Deps{
		Journal:          journal,
		Flusher:          &memory.Flusher{Ledger: ledger, Consumer: memory.Consumer(b3MaxAttempts), Wake: worker.Wake},
		Memory:           memory.Reader{Store: store},
		Experience:       experience.Reviews{Store: store},
		Ledger:           ledger,
		Store:            store,
		FlushDefaultWait: 10 * time.Second,
		FlushMaxWait:     30 * time.Second,
		Role:             "all",
		Logger:           zerolog.Nop(),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		res.err = err
		return res
	}
	httpSrv := &http.Server{Handler: handlers.New(deps), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = httpSrv.Serve(ln) }()
	defer httpSrv.Close()
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = worker.Run(runCtx) }()
	defer func() { stop(); wg.Wait() }()

	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 1}, Timeout: 60 * time.Second}
	// flush returns the request latency and the API's overhead on top of the ledger: latency minus the time the item
	// spent in the ledger (created_at under the enqueue's lane lock → completed_at in the final transaction, both
	// database time), i.e. request decoding, the enqueue transaction's round trips, the wait poll's lag after the
	// commit, and the response.
	flush := func(scope string, seq int) (time.Duration, time.Duration, error) {
		if _, err := journal.Capture(ctx, sources.CaptureRequest{ScopeID: scope, SourceID: fmt.Sprintf("s-%d", seq),
			Content: fmt.Sprintf("Decision %d: the team prefers small pull requests and green builds.", seq)}); err != nil {
			return 0, 0, fmt.Errorf("capture: %w", err)
		}
		body, _ := json.Marshal(types.FlushRequest{ScopeID: scope})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/memory/flush", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Prefer", "wait=10")
		t := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, err
		}
		payload, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		d := time.Since(t)
		if resp.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("flush answered %d: %s", resp.StatusCode, payload)
		}
		var out types.FlushResponse
		if err := json.Unmarshal(payload, &out); err != nil || out.Status != memory.FlushProcessed || out.OperationID == nil {
			return 0, 0, fmt.Errorf("flush answered %s", payload)
		}
		item, err := ledger.Get(ctx, *out.OperationID)
		if err != nil {
			return 0, 0, err
		}
		return d, d - item.CompletedAt.Sub(item.CreatedAt), nil
	}

	// Warm-up: connections, statement caches, the worker's first pass.
	for i := range 20 {
		if _, _, err := flush(fmt.Sprintf("b3-warm-%d", i%4), i); err != nil {
			res.err = fmt.Errorf("warm-up: %w", err)
			return res
		}
	}
	perClient := max(1, requests/clients)
	res.requests = perClient * clients
	times := make([][]time.Duration, clients)
	overheads := make([][]time.Duration, clients)
	errs := make(chan error, clients)
	start := time.Now()
	var cwg sync.WaitGroup
	for c := range clients {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			scope := fmt.Sprintf("b3-%d-%d", clients, c)
			for i := range perClient {
				d, ov, err := flush(scope, i)
				if err != nil {
					errs <- err
					return
				}
				times[c] = append(times[c], d)
				overheads[c] = append(overheads[c], ov)
			}
		}()
	}
	cwg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		res.err = err
		return res
	}
	var all, ov []time.Duration
	for c := range times {
		all = append(all, times[c]...)
		ov = append(ov, overheads[c]...)
	}
	res.ovP50, res.ovP99 = percentile(ov, 50), percentile(ov, 99)
	res.p50, res.p90, res.p99, res.max = percentile(all, 50), percentile(all, 90), percentile(all, 99), percentile(all, 100)
	res.rps = float64(len(all)) / elapsed.Seconds()
	return res
}
