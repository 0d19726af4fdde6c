package app

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/migrate"
)

// schemaCheck is the readiness value of the last schema check: ok (exact), ahead_expand_only, behind_contract_only
// or incompatible (migrate.Compatibility).
func schemaCheck(v any) string {
	s, _ := v.(string)
	switch s {
	case "", string(migrate.CompatExact):
		return checkOK
	}
	return s
}

func hasMember(members []db.RuntimeMember, id string) bool {
	for _, m := range members {
		if m.MemberID == id {
			return true
		}
	}
	return false
}

// Readiness states of the individual checks.
const (
	checkOK      = "ok"
	checkUnknown = "unknown"     // not evaluated (the database is unavailable)
	checkNotRun  = "not_run"     // this role does not run the part
	checkDown    = "unavailable" // the check's query failed
)

// Readiness reports the process's status and every check by name — database, membership, scheduler, worker
// (its handlers against the lane heads) and provider — each with a bounded state:
//
//	database    ok | unavailable
//	membership  ok | missing | no_live_members | version_range_mismatch | schema_refresh_pending | mixed_versions | no_scheduler |
//	            no_worker | no_scheduler_no_worker | unavailable | unknown
//	scheduler   leader | standby | failing (SchedulerFailingAfter ticks in a row failed) | not_run
//	worker      ok | unsupported_work_waiting | unavailable | unknown | not_run
//	provider    unknown (no call yet) | ok | rate_limited | unavailable | invalid_output | request_rejected | error | not_run
//	provider_kind  local | openai (workers only)
//	process     running | stopping (Run is shutting down: the process finishes its work but takes no more)
//	schema      ok | ahead_expand_only | behind_contract_only | incompatible (the database was migrated past what
//	            this binary can run against while it ran; distributed processes re-check at every membership beat)
//
// The status is the worst of: stopping → not_ready; database unavailable → not_ready; scheduler failing → not_ready
// for role scheduler, degraded otherwise; schema incompatible → misconfigured; own member row missing → not_ready;
// membership per coordinator.MembershipCheck;
// unsupported work waiting → misconfigured; the last provider call unavailable → degraded.
func (r *Runtime) Readiness(ctx context.Context) (string, map[string]any) {
	checks := map[string]any{"database": checkOK, "membership": checkUnknown, "scheduler": checkNotRun,
		"worker": checkNotRun, "provider": checkNotRun, "process": "running", "schema": schemaCheck(r.schemaState.Load())}
	if r.stopping.Load() {
		checks["process"] = "stopping"
	}
	if r.scheduler != nil {
		if _, leader := r.scheduler.Leader(); leader {
			checks["scheduler"] = "leader"
		} else {
			checks["scheduler"] = "standby"
		}
		if r.scheduler.Failing() {
			checks["scheduler"] = "failing"
		}
	}
	if r.worker != nil {
		checks["worker"] = checkUnknown
		checks["provider"] = r.tel.ProviderState()
		kind := r.cfg.ProviderKind
		if kind == "" {
			kind = "local"
		}
		checks["provider_kind"] = kind
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := r.store.DBNow(ctx); err != nil {
		checks["database"] = checkDown
		return coordinator.ReadyNotReady, checks
	}
	status := coordinator.ReadyReady
	worse := func(s string) {
		rank := map[string]int{coordinator.ReadyReady: 0, coordinator.ReadyDegraded: 1, coordinator.ReadyNotReady: 2, coordinator.ReadyMisconfigured: 3}
		if rank[s] > rank[status] {
			status = s
		}
	}
	if r.stopping.Load() {
		worse(coordinator.ReadyNotReady)
	}
	if checks["schema"] == string(migrate.CompatNone) {
		worse(coordinator.ReadyMisconfigured)
	}
	if checks["scheduler"] == "failing" {
		// A scheduler process exists to tick; a single_node process still serves the API while discovery fails.
		if r.cfg.Role == RoleScheduler {
			worse(coordinator.ReadyNotReady)
		} else {
			worse(coordinator.ReadyDegraded)
		}
	}
	members, err := coordinator.LiveMembers(ctx, r.store)
	switch {
	case err != nil:
		checks["membership"] = checkDown
		worse(coordinator.ReadyNotReady)
	case !hasMember(members, r.memberID):
		// This process's own row expired or was deleted (its heartbeats fail): the rest of the deployment cannot
		// see it, so nothing vouches for its versions. The next successful heartbeat writes the row again.
		checks["membership"] = "missing"
		worse(coordinator.ReadyNotReady)
	default:
		st, reason := coordinator.MembershipCheck(members, r.cfg.Role)
		checks["membership"] = reason
		worse(st)
	}
	if r.worker != nil {
		n, err := r.ledger.UnsupportedHeadCount(ctx, r.worker.Supported())
		switch {
		case err != nil:
			checks["worker"] = checkDown
			worse(coordinator.ReadyNotReady)
		case n > 0:
			checks["worker"] = "unsupported_work_waiting"
			worse(coordinator.ReadyMisconfigured)
		default:
			checks["worker"] = checkOK
		}
		if checks["provider"] == "unavailable" {
			worse(coordinator.ReadyDegraded)
		}
	}
	return status, checks
}
