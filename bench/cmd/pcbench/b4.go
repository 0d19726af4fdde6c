package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// b4Result is the number of database round trips of one item lifecycle.
type b4Result struct {
	engine                                  db.Engine
	items                                   int
	enqueue, claim, complete                float64 // per item, on an existing idle lane (steady state)
	total                                   float64
	newLaneTotal                            float64 // per item, each on a lane that does not exist yet
	batch                                   int     // items per batch of the batched lifecycle
	batchEnqueue, batchClaim, batchComplete float64 // per item, amortised over batches of `batch` items on existing lanes
	batchTotal                              float64
	prepares                                int64         // explicit prepares seen during the measured lifecycles (0 expected)
	latencyP50                              time.Duration // wall time of one steady-state lifecycle, one at a time
	err                                     error
}

// runB4 counts round trips of enqueue + claim (one pass, one slot) + complete, sequentially, one item at a time:
// first on lanes that already exist and are idle (the steady state of a scope that was flushed before), then on
// brand-new lanes (a scope's first flush: the autocommitted lane insert-if-absent and the retried transaction).
// A warm-up pass fills connection pools and statement caches first.
func runB4(ctx context.Context, srv *servers, engine db.Engine, items int) b4Result {
	res := b4Result{engine: engine, items: items}
	bdb, err := srv.createDB(ctx, engine)
	if err != nil {
		res.err = err
		return res
	}
	defer bdb.drop()
	cnt := &counter{}
	store, err := openStore(ctx, bdb, storeOptions{maxConns: 4, counter: cnt})
	if err != nil {
		res.err = err
		return res
	}
	defer store.Close()
	l := coordinator.NewLedger(store)
	supported := coordinator.Supported{noopKind: {Min: 1, Max: 1}}

	next := 0
	lifecycle := func(lane string) (enq, clm, cmp int64, err error) {
		next++
		c0 := cnt.load()
		if _, err := enqueueNoop(ctx, l, lane, next); err != nil {
			return 0, 0, 0, err
		}
		c1 := cnt.load()
		cr, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: "pcbench-b4", Supported: supported, Slots: 1, Lease: time.Minute})
		if err != nil {
			return 0, 0, 0, err
		}
		if len(cr.Claims) != 1 {
			return 0, 0, 0, fmt.Errorf("claimed %d items, want 1", len(cr.Claims))
		}
		c2 := cnt.load()
		if _, err := l.Complete(ctx, cr.Claims[0], coordinator.Result{Code: "processed"}, nil); err != nil {
			return 0, 0, 0, err
		}
		c3 := cnt.load()
		return c1 - c0, c2 - c1, c3 - c2, nil
	}

	// Warm-up on the steady-state lanes (this also creates them).
	for i := range items {
		if _, _, _, err := lifecycle("b4-" + strconv.Itoa(i)); err != nil {
			res.err = err
			return res
		}
	}
	p0 := cnt.prepares.Load()
	var enq, clm, cmp int64
	var lat []time.Duration
	for i := range items {
		t := time.Now()
		e, c, m, err := lifecycle("b4-" + strconv.Itoa(i))
		lat = append(lat, time.Since(t))
		if err != nil {
			res.err = err
			return res
		}
		enq, clm, cmp = enq+e, clm+c, cmp+m
	}
	n := float64(items)
	res.enqueue, res.claim, res.complete = float64(enq)/n, float64(clm)/n, float64(cmp)/n
	res.total = res.enqueue + res.claim + res.complete
	res.latencyP50 = percentile(lat, 50)
	var fresh int64
	for i := range items {
		e, c, m, err := lifecycle("b4-new-" + strconv.Itoa(i))
		if err != nil {
			res.err = err
			return res
		}
		fresh += e + c + m
	}
	res.newLaneTotal = float64(fresh) / n

	// Batched lifecycles: `batch` items on `batch` existing idle lanes enqueued as one bulk enqueue, claimed by one
	// claim pass with `batch` idle slots, and completed as one batch.
	res.batch = b4Batch
	var benq, bclm, bcmp int64
	rounds := max(1, items/b4Batch)
	for r := range rounds + 1 { // the first round is a warm-up
		c0 := cnt.load()
		first := next + 1
		next += b4Batch
		if err := enqueueNoopLanes(ctx, l, "b4-", first, b4Batch); err != nil {
			res.err = err
			return res
		}
		c1 := cnt.load()
		cr, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: "pcbench-b4", Supported: supported, Slots: b4Batch, Lease: time.Minute})
		if err != nil {
			res.err = err
			return res
		}
		if len(cr.Claims) != b4Batch {
			res.err = fmt.Errorf("batched claim pass claimed %d items, want %d", len(cr.Claims), b4Batch)
			return res
		}
		c2 := cnt.load()
		if err := completeNoopBatch(ctx, l, cr.Claims); err != nil {
			res.err = err
			return res
		}
		c3 := cnt.load()
		if r > 0 {
			benq, bclm, bcmp = benq+c1-c0, bclm+c2-c1, bcmp+c3-c2
		}
	}
	bn := float64(rounds * b4Batch)
	res.batchEnqueue, res.batchClaim, res.batchComplete = float64(benq)/bn, float64(bclm)/bn, float64(bcmp)/bn
	res.batchTotal = res.batchEnqueue + res.batchClaim + res.batchComplete
	res.prepares = cnt.prepares.Load() - p0
	return res
}

// b4Batch is the batch size of B4's batched lifecycle.
const b4Batch = 16

// enqueueNoopLanes enqueues items first … first+count−1 as one bulk enqueue (Ledger.EnqueueMany), item first+j on
// lane prefix+j (the lanes exist and are idle).
func enqueueNoopLanes(ctx context.Context, l *coordinator.Ledger, prefix string, first, count int) error {
	reqs := make([]coordinator.EnqueueRequest, 0, count)
	for j := range count {
		reqs = append(reqs, noopRequest(prefix+strconv.Itoa(j), first+j))
	}
	_, err := l.EnqueueMany(ctx, reqs)
	return err
}

// completeNoopBatch completes the claims as one batch (Ledger.CompleteMany: one transaction, a savepoint per item).
func completeNoopBatch(ctx context.Context, l *coordinator.Ledger, claims []coordinator.Claim) error {
	cs := make([]coordinator.Completion, len(claims))
	for i, c := range claims {
		cs[i] = coordinator.Completion{Claim: c, Result: coordinator.Result{Code: "processed"}}
	}
	for _, r := range l.CompleteMany(ctx, cs) {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}
