package coordinator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/db"
)

// WorkerConfig configures a Worker. Zero durations take the docs/architecture.md#configuration defaults.
type WorkerConfig struct {
	Owner         string // the process's member id
	Concurrency   int    // execution slots (default 4)
	Lease         time.Duration
	Heartbeat     time.Duration
	Poll          time.Duration
	ShutdownGrace time.Duration
	RetryBase     time.Duration
	RetryMax      time.Duration
	Logger        zerolog.Logger
	Hooks         WorkerHooks
	// MaxSnoozes caps the snoozes of one item per recovery generation (docs/protocol.md#snooze); 0 takes
	// DefaultMaxSnoozes, a negative value turns snoozing off (every failure spends the retry budget).
	MaxSnoozes int32
	// CompleteBatch caps the completions one transaction carries (docs/protocol.md#completer); 0 takes
	// DefaultCompleteBatch, 1 commits every completion in its own transaction.
	CompleteBatch int
	// CompleteDelay holds a batch open this long for more completions once one is ready; 0 (the default) batches
	// only what arrived while the previous transaction committed, so an idle worker adds no latency.
	CompleteDelay time.Duration
}

// DefaultCompleteBatch is the completer's default batch cap.
const DefaultCompleteBatch = 64

// WorkerHooks observe the worker (metrics, traces). Every field is optional.
type WorkerHooks struct {
	// ClaimPass is called after every claim pass.
	ClaimPass func(d time.Duration, claimed []Claim, expired int)
	// LeaseExpired is called once per expired lease a claim pass recovered (after its transaction committed).
	LeaseExpired func(e LeaseExpiration)
	// NewTrace returns ids for a new attempt's execution span (stored on the attempt row).
	NewTrace func() (traceID, spanID string)
	// StartAttempt wraps one attempt's execution; it returns a context for the attempt and a func called with the
	// attempt's outcome (attempt outcome, error category) when it ends.
	StartAttempt func(ctx context.Context, c Claim) (context.Context, func(outcome, errorCategory string))
	// CompleteBatch is called after every completer transaction with the number of completions it carried.
	CompleteBatch func(n int)
}

func (c *WorkerConfig) defaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.Lease <= 0 {
		c.Lease = 120 * time.Second
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 30 * time.Second
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = 90 * time.Second
	}
	if c.RetryBase <= 0 {
		c.RetryBase = 2 * time.Second
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 300 * time.Second
	}
	if c.MaxSnoozes == 0 {
		c.MaxSnoozes = DefaultMaxSnoozes
	}
	if c.CompleteBatch <= 0 {
		c.CompleteBatch = DefaultCompleteBatch
	}
}

// Worker claims lane heads it can execute into idle slots and runs them: prepare outside any transaction with a
// heartbeat extending the lease, then complete (domain commit in the final transaction) or fail with backoff.
type Worker struct {
	ledger    *Ledger
	cfg       WorkerConfig
	handlers  map[string]Handler
	supported Supported
	wake      chan struct{}
	freed     chan struct{}
	running   atomic.Int32
	handedOff atomic.Int32 // completions waiting on the completer whose attempts gave their slot back
	completer *completer
	log       zerolog.Logger
}

// NewWorker returns a worker for the given handlers.
func NewWorker(ledger *Ledger, cfg WorkerConfig, handlers ...Handler) (*Worker, error) {
	cfg.defaults()
	if cfg.Owner == "" {
		return nil, invalidArgument("worker owner is required")
	}
	w := &Worker{ledger: ledger, cfg: cfg, handlers: map[string]Handler{}, supported: Supported{},
		wake: make(chan struct{}, 1), freed: make(chan struct{}, cfg.Concurrency), log: cfg.Logger.With().Str("component", "worker").Logger()}
	w.completer = newCompleter(ledger, cfg.CompleteBatch, cfg.CompleteDelay, cfg.Hooks.CompleteBatch)
	for _, h := range handlers {
		if _, dup := w.handlers[h.Kind()]; dup {
			return nil, invalidArgument("two handlers for kind %s", h.Kind())
		}
		w.handlers[h.Kind()] = h
		w.supported[h.Kind()] = h.PayloadVersions()
	}
	return w, nil
}

// Supported returns the (kind, payload version) ranges this worker executes.
func (w *Worker) Supported() Supported { return w.supported }

// Running returns the number of attempts executing now.
func (w *Worker) Running() int { return int(w.running.Load()) }

// Wake makes the worker claim now instead of at the next poll (an in-process enqueue calls it).
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run claims and executes work until ctx is done. Then it stops claiming, lets in-flight attempts finish for up to
// ShutdownGrace (their completions commit at once, without a window), and abandons the rest (their leases expire
// and another worker recovers them).
func (w *Worker) Run(ctx context.Context) error {
	execCtx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	stopCompleter, completerDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(completerDone); w.completer.run(stopCompleter, ctx.Done()) }()
	defer func() { close(stopCompleter); <-completerDone }() // after every attempt has returned (below)
	defer w.ledger.onEnqueued(w.Wake)()                      // cross-process wake-ups, when the ledger listens (wakeup.go)
	var inflight sync.WaitGroup
	timer := time.NewTimer(0)
	defer timer.Stop()
	for ctx.Err() == nil {
		idle := w.cfg.Concurrency - int(w.running.Load())
		more := false
		if idle > 0 {
			start := time.Now()
			res, err := w.ledger.Claim(ctx, ClaimRequest{Owner: w.cfg.Owner, Supported: w.supported, Slots: idle,
				Lease: w.cfg.Lease, NewTrace: w.cfg.Hooks.NewTrace})
			if w.cfg.Hooks.ClaimPass != nil && err == nil {
				w.cfg.Hooks.ClaimPass(time.Since(start), res.Claims, res.Expired)
			}
			if w.cfg.Hooks.LeaseExpired != nil && err == nil {
				for _, e := range res.Expirations {
					w.cfg.Hooks.LeaseExpired(e)
				}
			}
			switch {
			case err != nil && ctx.Err() == nil:
				w.log.Error().Str("error_class", ErrorClass(err)).Msg("claim pass failed")
			case err == nil:
				for _, c := range res.Claims {
					w.running.Add(1)
					inflight.Add(1)
					go func() {
						defer inflight.Done()
						var once sync.Once
						giveSlotBack := func() {
							once.Do(func() {
								w.running.Add(-1)
								select {
								case w.freed <- struct{}{}:
								default:
								}
							})
						}
						defer giveSlotBack()
						w.execute(execCtx, c, giveSlotBack)
					}()
				}
				more = res.Expired > 0 || (len(res.Claims) > 0 && int(w.running.Load()) < w.cfg.Concurrency)
			}
		}
		if more {
			continue
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(w.cfg.Poll)
		select {
		case <-ctx.Done():
		case <-w.wake:
		case <-w.freed:
		case <-timer.C:
		}
	}
	done := make(chan struct{})
	go func() { inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(w.cfg.ShutdownGrace):
		w.log.Warn().Int("running", w.Running()).Msg("shutdown grace elapsed, abandoning attempts")
		abandon()
		<-done
	}
	return nil
}

// execute runs one claimed attempt to its end. giveSlotBack gives the attempt's execution slot back early: once its
// preparation is done and its completion is handed to the completer, as long as no more than Concurrency completions
// wait there with their slots given back (docs/protocol.md#execute). The slot no longer runs handler code, and the
// worker can claim into it while the completion commits.
func (w *Worker) execute(ctx context.Context, c Claim, giveSlotBack func()) {
	log := w.log.With().Str("work_id", c.Item.WorkID).Str("kind", c.Item.Kind).Int32("attempt", c.AttemptNo).Int64("fence", c.Fence).
		Str("trace_id", c.TraceID).Logger()
	finish := func(string, string) {}
	if w.cfg.Hooks.StartAttempt != nil {
		ctx, finish = w.cfg.Hooks.StartAttempt(ctx, c)
	}
	h := w.handlers[c.Item.Kind]
	if h == nil { // cannot happen: only supported kinds are claimed
		finish(db.OutcomeFailed, CategoryConfiguration)
		return
	}

	prepCtx, cancelPrep := context.WithCancelCause(ctx)
	defer cancelPrep(nil)
	var lost atomic.Value // error: ErrStaleWorkClaim or ErrCancelRequested seen by the heartbeat
	hbStop := make(chan struct{})
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		t := time.NewTicker(w.cfg.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-hbStop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			res, err := w.ledger.Heartbeat(ctx, c, w.cfg.Lease)
			switch {
			case errors.Is(err, ErrStaleWorkClaim):
				lost.Store(ErrStaleWorkClaim)
				cancelPrep(ErrStaleWorkClaim)
				return
			case err != nil:
				log.Warn().Str("error_class", ErrorClass(err)).Msg("heartbeat failed")
			case res.CancelRequested:
				lost.Store(ErrCancelRequested)
				cancelPrep(ErrCancelRequested)
				return
			}
		}
	}()

	prepared, perr := safePrepare(prepCtx, h, c.Item)
	close(hbStop)
	<-hbDone

	if ctx.Err() != nil { // abandoned at shutdown: write nothing, the lease expires
		finish("abandoned", "")
		return
	}
	if v := lost.Load(); v != nil {
		if v.(error) == ErrStaleWorkClaim {
			log.Warn().Msg("claim lost during prepare")
			finish("stale", CategoryLeaseLost)
			return
		}
		w.confirmCancelled(ctx, c, log, finish)
		return
	}
	if perr != nil {
		w.fail(ctx, c, perr, log, finish)
		return
	}
	if w.handedOff.Add(1) <= int32(w.cfg.Concurrency) {
		giveSlotBack()
	}
	err := w.completer.complete(ctx, Completion{Claim: c, Result: prepared.Result, Commit: prepared.Commit, Alone: prepared.Alone}).Err
	w.handedOff.Add(-1)
	switch {
	case err == nil:
		finish(db.OutcomeSucceeded, "")
	case errors.Is(err, ErrCancelRequested):
		w.confirmCancelled(ctx, c, log, finish)
	case errors.Is(err, ErrStaleWorkClaim):
		log.Warn().Msg("claim lost before commit")
		finish("stale", CategoryLeaseLost)
	case errors.Is(err, db.ErrDeadlock):
		log.Error().Str("error_class", ErrorClass(err)).Msg("engine deadlock in complete")
		finish("error", CategoryInternal)
	default:
		w.fail(ctx, c, err, log, finish)
	}
}

// CategoryLeaseLost labels attempts whose claim went stale (metrics only; never stored).
const CategoryLeaseLost = "lease"

func (w *Worker) fail(ctx context.Context, c Claim, cause error, log zerolog.Logger, finish func(string, string)) {
	if w.snooze(ctx, c, cause, finish) {
		return
	}
	f := Classify(cause)
	item, err := w.ledger.Fail(ctx, c, f, w.failDelay(c, cause))
	switch {
	case err == nil:
		outcome, category := db.OutcomeRetryWait, f.Category
		switch item.Status {
		case db.StatusFailed:
			outcome = db.OutcomeFailed
		case db.StatusCancelled: // a pending cancel request won over the failure (the attempt row says so too)
			outcome, category = db.OutcomeCancelled, ErrorCategoryCancellation
		}
		log.Info().Str("error_category", category).Str("error_code", item.ErrorCode).Str("status", item.Status).Msg("attempt failed")
		finish(outcome, category)
	case errors.Is(err, ErrStaleWorkClaim):
		log.Warn().Msg("claim lost before fail")
		finish("stale", CategoryLeaseLost)
	default:
		log.Error().Str("error_class", ErrorClass(err)).Msg("recording failure failed")
		finish("error", CategoryInternal)
	}
}

func (w *Worker) confirmCancelled(ctx context.Context, c Claim, log zerolog.Logger, finish func(string, string)) {
	if _, err := w.ledger.ConfirmCancelled(ctx, c); err != nil {
		log.Warn().Str("error_class", ErrorClass(err)).Msg("confirm cancelled failed")
		finish("stale", CategoryLeaseLost)
		return
	}
	log.Info().Msg("attempt cancelled")
	finish(db.OutcomeCancelled, ErrorCategoryCancellation)
}

// backoff is full jitter: uniform(0, min(RetryMax, RetryBase·2^(n-1))) for the n-th attempt of the generation.
func (w *Worker) backoff(n int32) time.Duration {
	return FullJitter(w.cfg.RetryBase, w.cfg.RetryMax, n)
}

// FullJitter returns uniform(0, min(max, base·2^(n-1))).
func FullJitter(base, maxDelay time.Duration, n int32) time.Duration {
	if n < 1 {
		n = 1
	}
	ceiling := base
	for i := int32(1); i < n && ceiling < maxDelay; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, maxDelay)
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

func safePrepare(ctx context.Context, h Handler, item db.WorkItem) (p Prepared, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %w", NewHandlerError(CategoryInternal, CodeUnhandled, true))
		}
	}()
	return h.Prepare(ctx, item)
}
