package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
)

// b5Result is the cross-process latency from enqueue (this process, as an API replica would) to claim (a worker in
// another process).
type b5Result struct {
	engine             db.Engine
	notify             bool // cross-process wake-ups (PostgreSQL LISTEN/NOTIFY) on in both processes
	items              int
	gap                time.Duration
	p50, p90, p99, max time.Duration
	err                error
}

func (r b5Result) summary() string {
	if r.err != nil {
		return "error: " + r.err.Error()
	}
	return fmt.Sprintf("enqueue → claim p50 %s p90 %s p99 %s max %s", ms(r.p50), ms(r.p90), ms(r.p99), ms(r.max))
}

// b5WorkerFlag makes pcbench run as B5's worker process (re-executed by runB5; not for direct use).
const b5WorkerFlag = "b5-worker"

// runB5 starts a worker in a separate process (this binary re-executed with -b5-worker URL: a coordinator.Worker
// with the service's defaults — 4 slots, poll 1 s — and the no-op handler), then enqueues `items` no-op items one at
// a time, each on its own lane, with a random gap of gap/2 … 3·gap/2 between them, and waits until all succeeded. The
// latency of one item is its first attempt's started_at minus its created_at: both are database time (the
// enqueue's lane lock and the claim's item lock), so no clock is compared across processes. It includes the enqueue's
// commit, the wake-up of the other process (a notification or the next poll) and the claim.
//
// With notify (PostgreSQL), both processes run as the service does by default there: the enqueues notify
// pc_work_enqueued with their COMMIT and the worker process listens (docs/protocol.md#wake-ups); without it the
// worker learns of new work at its next poll.
func runB5(ctx context.Context, srv *servers, engine db.Engine, notify bool, items int, gap time.Duration) b5Result {
	res := b5Result{engine: engine, notify: notify, items: items, gap: gap}
	bdb, err := srv.createDB(ctx, engine)
	if err != nil {
		res.err = err
		return res
	}
	defer bdb.drop()
	store, err := openStore(ctx, bdb, storeOptions{maxConns: 4})
	if err != nil {
		res.err = err
		return res
	}
	defer store.Close()
	api := coordinator.NewLedger(store)
	api.SetNotify(notify)

	self, err := os.Executable()
	if err != nil {
		res.err = err
		return res
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := []string{"-" + b5WorkerFlag, bdb.raw}
	if notify {
		args = append(args, b5Notify)
	}
	cmd := exec.CommandContext(cctx, self, args...)
	cmd.SysProcAttr = childProcAttr()
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		res.err = err
		return res
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		res.err = err
		return res
	}
	if err := cmd.Start(); err != nil {
		res.err = err
		return res
	}
	defer func() {
		_ = stdin.Close() // the worker stops when its stdin closes
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cancel()
			<-done
		}
	}()
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- nil
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
		}
		ready <- errors.New("worker process exited before it was ready")
	}()
	select {
	case err := <-ready:
		if err != nil {
			res.err = err
			return res
		}
	case <-time.After(60 * time.Second):
		res.err = errors.New("worker process not ready after 60 s")
		return res
	}

	ids := make([]string, 0, items)
	for i := range items {
		r, err := enqueueNoop(ctx, api, "b5-"+strconv.Itoa(i), i)
		if err != nil {
			res.err = err
			return res
		}
		ids = append(ids, r.Item.WorkID)
		time.Sleep(gap/2 + rand.N(gap+1))
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		stats, err := store.WorkItemQueueStatistics(ctx)
		if err != nil {
			res.err = err
			return res
		}
		left := int64(0)
		for _, s := range stats {
			left += s.Count
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			res.err = fmt.Errorf("%d items not done after 60 s", left)
			return res
		}
		time.Sleep(20 * time.Millisecond)
	}
	lat := make([]time.Duration, 0, items)
	for _, id := range ids {
		item, err := api.Get(ctx, id)
		if err != nil {
			res.err = err
			return res
		}
		as, err := api.Attempts(ctx, id)
		if err != nil {
			res.err = err
			return res
		}
		if item.Status != db.StatusSucceeded || len(as) == 0 {
			res.err = fmt.Errorf("item %s is %s with %d attempts", id, item.Status, len(as))
			return res
		}
		lat = append(lat, as[0].StartedAt.Sub(item.CreatedAt))
	}
	res.p50, res.p90, res.p99, res.max = percentile(lat, 50), percentile(lat, 90), percentile(lat, 99), percentile(lat, 100)
	return res
}

// b5Notify is the worker process's third argument when it listens for wake-ups.
const b5Notify = "notify"

// runB5Worker is the worker process of B5: it prints "ready" after its first claim pass (and, with notify, once its
// listener is connected) and runs until its stdin closes.
func runB5Worker(raw string, notify bool) error {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	u, err := dburl.Parse(raw)
	if err != nil {
		return err
	}
	store, err := openStore(ctx, &benchDB{engine: u.Engine, url: u, raw: raw}, storeOptions{})
	if err != nil {
		return err
	}
	defer store.Close()
	ledger := coordinator.NewLedger(store)
	ledger.SetNotify(notify)
	var once sync.Once
	passed, listening := make(chan struct{}), make(chan struct{})
	w, err := coordinator.NewWorker(ledger, coordinator.WorkerConfig{
		Owner: "pcbench-b5-worker-" + strconv.Itoa(os.Getpid()), Logger: zerolog.Nop(),
		Hooks: coordinator.WorkerHooks{ClaimPass: func(time.Duration, []coordinator.Claim, int) {
			once.Do(func() { close(passed) })
		}},
	}, noopHandler{})
	if err != nil {
		return err
	}
	if notify {
		var connected sync.Once
		go func() {
			_ = ledger.Listen(ctx, coordinator.ListenHooks{Connected: func() { connected.Do(func() { close(listening) }) }})
		}()
	} else {
		close(listening)
	}
	go func() {
		<-passed
		<-listening
		fmt.Println("ready")
	}()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	return w.Run(ctx)
}

// isB5Worker reports whether the command line asks for B5's worker process, its database URL and whether it
// listens for wake-ups.
func isB5Worker(args []string) (raw string, notify, ok bool) {
	if (len(args) == 2 || len(args) == 3 && args[2] == b5Notify) && strings.TrimLeft(args[0], "-") == b5WorkerFlag {
		return args[1], len(args) == 3, true
	}
	return "", false, false
}
