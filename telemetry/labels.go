package telemetry

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// Other is the label value of anything outside a label's bounded set.
const Other = "other"

// Outcomes this package adds to the attempt outcomes of the ledger (worker-side endings that write nothing).
const (
	OutcomeAbandoned = "abandoned" // shutdown grace elapsed; the lease expires and another worker recovers it
	OutcomeStale     = "stale"     // the claim went stale (lease lost) before the final write
	OutcomeError     = "error"     // the final write itself failed (database)
)

// Enqueue outcomes.
const (
	EnqueueCreated = "created"
	EnqueueJoined  = "joined"
)

// Provider call outcomes.
const (
	ProviderOK       = "ok"
	ProviderCanceled = "canceled"
	ProviderError    = "error"
)

// The documented label sets (every value a label can take; Other is in each where unknown inputs are possible). The
// kind label's set is not among them: it is the work kinds the process is built with (Config.Kinds, see KindLabels),
// which the domain packages declare and app hands in, so this package names no domain package.
var (
	EnqueueOutcomes = []string{EnqueueCreated, EnqueueJoined}
	AttemptOutcomes = []string{db.OutcomeSucceeded, db.OutcomeRetryWait, db.OutcomeSnoozed, db.OutcomeFailed, db.OutcomeCancelled,
		OutcomeAbandoned, OutcomeStale, OutcomeError, Other}
	ErrorCategories = []string{"none", coordinator.CategoryInternal, coordinator.CategoryPayload,
		coordinator.CategoryConflict, coordinator.CategoryRetention, coordinator.CategoryConfiguration,
		coordinator.CategoryProvider, coordinator.ErrorCategoryLease, coordinator.ErrorCategoryCancellation, Other}
	LeaseOutcomes      = []string{db.OutcomeLeaseExpiredRetry, db.OutcomeLeaseExpiredFailed, db.OutcomeCancelled, Other}
	LeadershipOutcomes = []string{coordinator.LeadershipAcquired, coordinator.LeadershipLost, coordinator.LeadershipReacquired}
	// QueueStatuses are the statuses the queue gauges report (non-terminal and failed items).
	QueueStatuses    = []string{db.StatusQueued, db.StatusRunning, db.StatusRetryWait, db.StatusCancelling, db.StatusFailed, Other}
	Roles            = []string{"all", "api", "scheduler", "worker", Other}
	Methods          = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, Other}
	StatusClasses    = []string{"1xx", "2xx", "3xx", "4xx", "5xx", Other}
	ProviderNames    = []string{"local", "openai", Other}
	ProviderOutcomes = []string{ProviderOK, coordinator.CodeRateLimited, coordinator.CodeUnavailable, coordinator.CodeInvalidOutput,
		coordinator.CodeRequestRejected, ProviderCanceled, ProviderError}
	// RouteUnmatched is the route label of a request that matched no registered route.
	RouteUnmatched = "unmatched"
)

func bounded(v string, set []string) string {
	if v != Other && slices.Contains(set, v) {
		return v
	}
	return Other
}

// KindLabels is the kind label's set for a process built with these work kinds (Config.Kinds): each kind once, in
// order, then Other. An empty kind or Other itself is never a kind of its own.
func KindLabels(kinds []string) []string {
	out := make([]string, 0, len(kinds)+1)
	for _, k := range kinds {
		if k != "" && k != Other && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return append(out, Other)
}

func (t *Telemetry) kindLabel(kind string) string { return bounded(kind, t.kinds) }

func attemptOutcomeLabel(o string) string { return bounded(o, AttemptOutcomes) }

func errorCategoryLabel(c string) string {
	if c == "" {
		return "none"
	}
	return bounded(c, ErrorCategories)
}

func leaseOutcomeLabel(o string) string { return bounded(o, LeaseOutcomes) }

func statusLabel(s string) string { return bounded(s, QueueStatuses) }

func roleLabel(r string) string { return bounded(r, Roles) }

func methodLabel(m string) string { return bounded(m, Methods) }

func providerLabel(p string) string { return bounded(p, ProviderNames) }

func statusClass(code int) string {
	if code < 100 || code > 599 {
		return Other
	}
	return StatusClasses[code/100-1]
}

// providerOutcome maps a provider error to its bounded outcome: the provider/* code, canceled, or error.
func providerOutcome(err error) string {
	if err == nil {
		return ProviderOK
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ProviderCanceled // the caller gave up (cancel request, shutdown), whatever the provider reported
	}
	var he *coordinator.HandlerError
	if errors.As(err, &he) && he.Category == coordinator.CategoryProvider {
		switch he.Code {
		case coordinator.CodeRateLimited, coordinator.CodeUnavailable, coordinator.CodeInvalidOutput, coordinator.CodeRequestRejected:
			return he.Code
		}
	}
	return ProviderError
}
