package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/powercontext/powercontext/coordinator"
)

// Run serves until ctx is done or a part fails, then shuts down in this order (docs/architecture.md#shutdown):
//
//  1. stop claiming and discovery: readiness turns not_ready (check process=stopping), the worker stops claiming,
//     and the scheduler stops ticking and releases the work-discovery lease at once (a standby need not wait for
//     it to expire);
//  2. drain: attempts in flight keep their heartbeats and finish (prepare, then commit) for up to the worker's
//     shutdown grace; the rest are abandoned without a write, so their leases expire and another worker recovers
//     them (docs/protocol.md#lease-expiry);
//  3. deregister: the membership heartbeat stops and the member row is deleted;
//  4. close HTTP: stop accepting, let requests in flight finish (at most httpShutdownTimeout);
//  5. release the single-node lease (renewed until here), close the database, flush telemetry.
//
// HTTP, membership and the database stay up through steps 1 and 2, so a request waiting on work that is draining
// (a flush) gets its answer, and the process stays visible to other members while it still holds work.
func (r *Runtime) Run(ctx context.Context) error {
	defer r.closeAll()
	scheme := "http"
	if r.certs != nil {
		scheme = "https"
		stopHUP := r.reloadOnSIGHUP()
		defer stopHUP()
	}
	r.log.Info().Str("listen", r.Addr()).Str("scheme", scheme).Str("mode", r.cfg.Mode).Msg("powercontext started")
	// A part that fails starts the same shutdown; Run returns its error.
	failed, fail := context.WithCancelCause(context.Background())
	defer fail(nil)
	base := context.WithoutCancel(ctx)

	var serving errgroup.Group
	serving.Go(func() error {
		serve := r.http.Serve
		if r.certs != nil {
			// ServeTLS (not a tls.Listener) so HTTP/2 is offered; a cleartext request on this port gets net/http's
			// 400 "Client sent an HTTP request to an HTTPS server" and never reaches a handler.
			serve = func(ln net.Listener) error { return r.http.ServeTLS(ln, "", "") }
		}
		if err := serve(r.listener); !errors.Is(err, http.ErrServerClosed) {
			fail(fmt.Errorf("http server: %w", err))
			return err
		}
		return nil
	})
	var lease, presence, roles *stage
	if r.single != nil {
		lease = r.startStage(base, fail, r.keepSingleNode)
	}
	presenceParts := []func(context.Context) error{r.membership.Run, r.observeMembers}
	if r.cfg.notifies(r.store.Engine()) && (r.cfg.RunsAPI() || r.cfg.RunsWorker()) {
		presenceParts = append(presenceParts, r.listenWakeups)
	}
	presence = r.startStage(base, fail, presenceParts...)
	var roleRuns []func(context.Context) error
	if r.scheduler != nil {
		roleRuns = append(roleRuns, r.scheduler.Run)
	}
	if r.worker != nil {
		roleRuns = append(roleRuns, r.worker.Run)
	}
	if r.cfg.SkillsLocalTargetDir != "" && r.cfg.Mode == ModeSingleNode {
		roleRuns = append(roleRuns, r.keepLocalSkills)
	}
	roles = r.startStage(base, fail, roleRuns...)

	select {
	case <-ctx.Done():
	case <-failed.Done():
	}
	r.stopping.Store(true)
	r.log.Info().Msg("powercontext stopping")
	roles.stop(r.log, "roles")         // 1, 2: discovery stopped and its lease released; the worker drained
	presence.stop(r.log, "membership") // 3: deregistered
	sctx, scancel := context.WithTimeout(base, httpShutdownTimeout)
	if err := r.http.Shutdown(sctx); err != nil {
		r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("http shutdown timed out, closing connections")
		_ = r.http.Close()
	}
	scancel()
	_ = serving.Wait()
	r.log.Info().Str("step", "http").Msg("shutdown step done") // 4
	if lease != nil {                                          // 5
		lease.stop(r.log, "single_node_lease")
		rctx, rcancel := context.WithTimeout(base, 5*time.Second)
		if err := r.ledger.ReleaseLease(rctx, *r.single); err != nil {
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("single-node lease release failed")
		}
		rcancel()
	}
	r.log.Info().Msg("powercontext stopped")
	return context.Cause(failed)
}

// httpShutdownTimeout bounds how long closing HTTP waits for requests in flight (a flush waits at most
// flush_max_wait_seconds on its own, and its operation has drained by then).
const httpShutdownTimeout = 10 * time.Second

// stage is a set of parts that start together and stop together (one errgroup under one context).
type stage struct {
	cancel context.CancelFunc
	group  errgroup.Group
}

// startStage runs each part under a context of its own stage; a part that returns an error before its stage is
// stopped calls fail.
func (r *Runtime) startStage(base context.Context, fail context.CancelCauseFunc, parts ...func(context.Context) error) *stage {
	ctx, cancel := context.WithCancel(base)
	st := &stage{cancel: cancel}
	for _, part := range parts {
		st.group.Go(func() error {
			err := part(ctx)
			if err != nil && ctx.Err() == nil {
				fail(err)
			}
			return err
		})
	}
	return st
}

// stop cancels the stage, waits for every part to return and logs the step (an error of a part is a warning).
func (st *stage) stop(log zerolog.Logger, step string) {
	st.cancel()
	if err := st.group.Wait(); err != nil {
		log.Warn().Str("step", step).Str("error_class", coordinator.ErrorClass(err)).Msg("shutdown step failed")
		return
	}
	log.Info().Str("step", step).Msg("shutdown step done")
}

// undoStart takes back what a failed Start already claimed in the database (its member row, the single-node
// lease), so a start that fails late (say, its listen address is taken) does not lock the next start out until
// the lease's time to live runs out.
func (r *Runtime) undoStart() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r.membership != nil {
		if _, err := r.store.RuntimeMemberDelete(ctx, r.memberID); err != nil {
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("member row delete after a failed start failed")
		}
	}
	if r.single != nil {
		if err := r.ledger.ReleaseLease(ctx, *r.single); err != nil {
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("single-node lease release after a failed start failed")
		}
	}
}

func (r *Runtime) closeAll() {
	if r.listener != nil {
		_ = r.listener.Close()
	}
	if r.store != nil {
		_ = r.store.Close()
	}
	if r.schemaDB != nil {
		_ = r.schemaDB.Close()
	}
	if r.tel != nil { // last, so spans ended during the shutdown are still exported
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := r.tel.Shutdown(ctx); err != nil {
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("telemetry shutdown failed")
		}
		cancel()
	}
}
