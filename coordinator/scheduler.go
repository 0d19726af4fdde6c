package coordinator

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/db"
)

// Discoverer finds work for the scheduler. Page reads one keyset page after continuation, outside any ledger
// transaction, and returns the windows to enqueue (each request's Lease is set by the scheduler) and the next
// continuation ("" when the scan reached the end and should wait for the next interval).
type Discoverer interface {
	Name() string
	Interval() time.Duration
	Page(ctx context.Context, continuation string, size int) (reqs []EnqueueRequest, next string, err error)
}

// Leadership events.
const (
	LeadershipAcquired   = "acquired"
	LeadershipLost       = "lost"
	LeadershipReacquired = "reacquired"
)

// SchedulerConfig configures a Scheduler. Zero values take the documented defaults (README.md#configuration).
type SchedulerConfig struct {
	Owner    string
	Lease    time.Duration // default 30 s
	Renew    time.Duration // default 10 s
	PageSize int           // default 100
	Logger   zerolog.Logger
	Hooks    SchedulerHooks
}

// SchedulerHooks observe the scheduler. Every field is optional.
type SchedulerHooks struct {
	Leadership func(event string, fence int64)
	Enqueued   func(discoverer string, res EnqueueResult)
	// Tick wraps one tick (tracing); it returns a context and a func called when the tick ends.
	Tick func(ctx context.Context) (context.Context, func(error))
}

// Scheduler is the durable, leader-elected discovery loop (docs/protocol.md#scheduler). Only the holder of the work-discovery
// lease enqueues, and every enqueue and scan save first asserts the lease in its own transaction, so a deposed
// leader's next write fails with ErrStaleCoordinatorLease and changes nothing.
type Scheduler struct {
	ledger      *Ledger
	cfg         SchedulerConfig
	discoverers []Discoverer
	log         zerolog.Logger

	mu         sync.Mutex // guards token and leader for Leader (readiness reads them from other goroutines)
	token      LeaseToken
	leader     bool
	everLeader bool
	failed     atomic.Int32 // consecutive ticks that ended in an error (readiness: FailingTicks)
}

// SchedulerFailingAfter is how many consecutive failed ticks make readiness report the scheduler as failing.
const SchedulerFailingAfter = 3

// FailingTicks returns how many ticks in a row ended in an error (0 after a tick that succeeded).
func (s *Scheduler) FailingTicks() int { return int(s.failed.Load()) }

// Failing reports whether the last SchedulerFailingAfter ticks all failed (docs/protocol.md#scheduler).
func (s *Scheduler) Failing() bool { return s.FailingTicks() >= SchedulerFailingAfter }

// NewScheduler returns a scheduler over the discoverers.
func NewScheduler(ledger *Ledger, cfg SchedulerConfig, discoverers ...Discoverer) (*Scheduler, error) {
	if cfg.Owner == "" {
		return nil, invalidArgument("scheduler owner is required")
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.Renew <= 0 {
		cfg.Renew = 10 * time.Second
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 100
	}
	return &Scheduler{ledger: ledger, cfg: cfg, discoverers: discoverers,
		log: cfg.Logger.With().Str("component", "scheduler").Logger()}, nil
}

// Leader reports whether the last tick held the lease, and its token.
func (s *Scheduler) Leader() (LeaseToken, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token, s.leader
}

// Run ticks every Renew interval until ctx is done, then releases the lease if held.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Renew)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.Error().Str("error_class", ErrorClass(err)).Msg("scheduler tick failed")
		}
		select {
		case <-ctx.Done():
			if s.leader {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				if err := s.ledger.ReleaseLease(rctx, s.token); err != nil {
					s.log.Warn().Str("error_class", ErrorClass(err)).Msg("lease release failed")
				}
				cancel()
				s.setLeader(false, s.token)
			}
			return nil
		case <-t.C:
		}
	}
}

// Tick acquires or renews the lease and, as leader, runs every due discoverer for at most one renew interval.
func (s *Scheduler) Tick(ctx context.Context) (err error) {
	if s.cfg.Hooks.Tick != nil {
		var end func(error)
		ctx, end = s.cfg.Hooks.Tick(ctx)
		defer func() { end(err) }()
	}
	defer func() {
		switch {
		case err == nil:
			s.failed.Store(0)
		case ctx.Err() == nil: // a tick cut short by shutdown is not a failure
			s.failed.Add(1)
		}
	}()
	res, err := s.ledger.AcquireLease(ctx, LeaseWorkDiscovery, s.cfg.Owner, s.cfg.Lease)
	if err != nil {
		return err
	}
	if !res.Acquired {
		s.setLeader(false, s.token)
		return nil
	}
	s.setLeader(true, res.Token)
	start := time.Now() // monotonic: the tick scans for at most one renew interval
	spent := func() bool { return time.Since(start) > s.cfg.Renew }
	for _, d := range s.discoverers {
		if err := s.runDiscoverer(ctx, d, spent); err != nil {
			if errors.Is(err, ErrStaleCoordinatorLease) {
				s.setLeader(false, s.token)
				return nil
			}
			return err
		}
	}
	return nil
}

func (s *Scheduler) setLeader(leader bool, token LeaseToken) {
	switch {
	case leader && !s.leader:
		event := LeadershipAcquired
		if s.everLeader {
			event = LeadershipReacquired
		}
		s.log.Info().Str("event", event).Int64("fence", token.Fence).Msg("scheduler leadership changed")
		if s.cfg.Hooks.Leadership != nil {
			s.cfg.Hooks.Leadership(event, token.Fence)
		}
		s.everLeader = true
	case !leader && s.leader:
		s.log.Info().Str("event", LeadershipLost).Int64("fence", s.token.Fence).Msg("scheduler leadership changed")
		if s.cfg.Hooks.Leadership != nil {
			s.cfg.Hooks.Leadership(LeadershipLost, s.token.Fence)
		}
	}
	s.mu.Lock()
	s.leader = leader
	s.token = token
	s.mu.Unlock()
}

// runDiscoverer scans pages of one discoverer while it is due and the tick's budget lasts.
func (s *Scheduler) runDiscoverer(ctx context.Context, d Discoverer, spent func() bool) error {
	for {
		scan, err := s.scanPosition(ctx, d.Name())
		if err != nil {
			return err
		}
		now, err := s.ledger.store.DBNow(ctx)
		if err != nil {
			return err
		}
		if scan.NextRunAt.After(now) {
			return nil
		}
		reqs, next, err := d.Page(ctx, scan.Continuation, s.cfg.PageSize)
		if err != nil {
			return err
		}
		token := s.token
		for _, r := range reqs {
			r.Lease = &token
			res, err := s.ledger.Enqueue(ctx, r)
			if err != nil {
				return err
			}
			if s.cfg.Hooks.Enqueued != nil && !res.Idle {
				s.cfg.Hooks.Enqueued(d.Name(), res)
			}
		}
		saved := scan
		saved.Continuation = next
		saved.NextRunAt = now
		if next == "" {
			saved.NextRunAt = now.Add(d.Interval())
		}
		saved.StateVersion = scan.StateVersion + 1
		saved.UpdatedAt = now
		err = s.ledger.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if err := assertLease(ctx, q, token); err != nil {
				return err
			}
			n, err := q.SchedulerScanUpdate(ctx, db.SchedulerScanUpdateParams{Scan: saved, ExpectedVersion: scan.StateVersion})
			if err != nil {
				return err
			}
			if n != 1 {
				return ErrStaleCoordinatorLease // another leader moved the scan: we are not the leader any more
			}
			return nil
		})
		if err != nil {
			return err
		}
		if next == "" || spent() {
			return nil
		}
	}
}

// scanPosition reads a discoverer's scan row, creating it (due now) when missing.
func (s *Scheduler) scanPosition(ctx context.Context, name string) (db.SchedulerScan, error) {
	scan, err := s.ledger.store.SchedulerScanGet(ctx, name)
	if !errors.Is(err, db.ErrNotFound) {
		return scan, err
	}
	now, err := s.ledger.store.DBNow(ctx)
	if err != nil {
		return scan, err
	}
	if _, err := s.ledger.store.SchedulerScanInsertIfAbsent(ctx, db.SchedulerScan{Discoverer: name, NextRunAt: now, StateVersion: 1, UpdatedAt: now}); err != nil {
		return scan, err
	}
	return s.ledger.store.SchedulerScanGet(ctx, name)
}
