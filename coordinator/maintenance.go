package coordinator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/powercontext/powercontext/db"
)

// KindMaintenance is the internal kind of operation maintenance (hidden from the Operation API).
const KindMaintenance = "powercontext.maintenance.operations"

// WorkKinds are the work kinds the ledger itself runs (maintenance); app hands them to telemetry with the domain
// packages' kinds.
func WorkKinds() []string { return []string{KindMaintenance} }

// PublicKindMaintenance is the name the Operation API and the dashboard show for maintenance operations.
const PublicKindMaintenance = "maintenance"

// MaintenanceScope is the scope id maintenance items are recorded under.
const MaintenanceScope = "powercontext:maintenance"

// maintenanceBatch bounds each purge statement (docs/protocol.md#scheduler).
const maintenanceBatch = 500

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// MaintenanceLaneKey and MaintenanceLogicalKey are fixed: at most one maintenance item is live at a time.
var (
	MaintenanceLaneKey    = sha256Hex("maintenance:" + MaintenanceScope)
	MaintenanceLogicalKey = sha256Hex(`["` + KindMaintenance + `","` + MaintenanceScope + `"]`)
)

// MaintenanceDiscoverer enqueues the one maintenance item every Every (default hourly).
type MaintenanceDiscoverer struct{ Every time.Duration }

// Name implements coordinator.Discoverer: the name of its scan.
func (d MaintenanceDiscoverer) Name() string { return "maintenance" }

// Interval implements coordinator.Discoverer: how often it runs.
func (d MaintenanceDiscoverer) Interval() time.Duration {
	if d.Every <= 0 {
		return time.Hour
	}
	return d.Every
}

// Page implements coordinator.Discoverer: one page of enqueue requests.
func (d MaintenanceDiscoverer) Page(context.Context, string, int) ([]EnqueueRequest, string, error) {
	return []EnqueueRequest{MaintenanceRequest()}, "", nil
}

// MaintenanceRequest is the enqueue request of the maintenance item. Under the maintenance lane lock its spec first
// re-queues a failed maintenance item (docs/protocol.md#scheduler): a failed run is retried on the next schedule, in a
// new recovery generation, instead of holding the fixed logical key — and with it every later run — for good.
func MaintenanceRequest() EnqueueRequest {
	return EnqueueRequest{LaneKey: MaintenanceLaneKey, Spec: func(ctx context.Context, q db.Queries) (*EnqueueSpec, error) {
		if err := requeueFailedMaintenance(ctx, q); err != nil {
			return nil, err
		}
		return &EnqueueSpec{Kind: KindMaintenance, PayloadVersion: 1, ScopeID: MaintenanceScope, LogicalKey: MaintenanceLogicalKey,
			Payload: map[string]any{}, MaxAttempts: 3}, nil
	}}
}

// requeueFailedMaintenance takes the maintenance key and item locks (after the lane lock the enqueue holds: the
// global order) and, when the live maintenance item is failed, makes the retry transition; the enqueue then joins
// the queued item.
func requeueFailedMaintenance(ctx context.Context, q db.Queries) error {
	key, err := q.WorkKeyLock(ctx, MaintenanceLogicalKey)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	item, now, err := q.WorkItemLock(ctx, key.WorkID)
	if err != nil || item.Status != db.StatusFailed {
		return err
	}
	_, err = requeueFailed(ctx, q, item, now)
	return err
}

// MaintenanceHandler purges, in batches of at most 500 rows per statement and with cut-offs on the database clock:
// succeeded/cancelled work older than Retention (default 30 days; failed work is never purged), expired rate-limit
// windows, expired dashboard sessions (docs/security.md#dashboard-sessions), and runtime member rows that expired more than MemberRetention ago (default 24 hours: the rows of
// processes that died without deleting their own; a row is only read while it is live, the margin keeps a crashed
// member visible to an operator reading the table for a while).
type MaintenanceHandler struct {
	Ledger          *Ledger
	Retention       time.Duration
	MemberRetention time.Duration
	// Tasks are further batched clean-ups of the domain (data retention, docs/protocol.md#retention), run after the
	// ledger's own, each reporting the rows it changed under its name in the result.
	Tasks []MaintenanceTask
}

// MaintenanceTask is one batched clean-up run by maintenance. Run gets the database clock read at the start of the
// run and returns the number of rows it changed; it must bound every statement (at most maintenanceBatch rows).
type MaintenanceTask struct {
	Name string // the result field, e.g. "erased_source_contents"
	Run  func(ctx context.Context, now time.Time) (int64, error)
}

// Kind implements coordinator.Handler: the work kind it runs.
func (h MaintenanceHandler) Kind() string { return KindMaintenance }

// PayloadVersions implements coordinator.Handler: the payload versions it accepts.
func (h MaintenanceHandler) PayloadVersions() VersionRange { return VersionRange{Min: 1, Max: 1} }

// Prepare implements coordinator.Handler: the work done outside any transaction.
func (h MaintenanceHandler) Prepare(ctx context.Context, _ db.WorkItem) (Prepared, error) {
	retention := h.Retention
	if retention <= 0 {
		retention = 30 * 24 * time.Hour
	}
	memberRetention := h.MemberRetention
	if memberRetention <= 0 {
		memberRetention = 24 * time.Hour
	}
	store := h.Ledger.Store()
	now, err := store.DBNow(ctx)
	if err != nil {
		return Prepared{}, err
	}
	// The ledger's own purges, each repeated until a batch comes back short, in this order.
	purges := []MaintenanceTask{
		{Name: "purged_items", Run: func(ctx context.Context, now time.Time) (int64, error) {
			return h.Ledger.PurgeTerminal(ctx, now.Add(-retention), maintenanceBatch)
		}},
		{Name: "purged_rate_limit_windows", Run: func(ctx context.Context, now time.Time) (int64, error) {
			return store.RateLimitWindowPurgeExpired(ctx, db.RateLimitWindowPurgeExpiredParams{ExpiredBefore: now, Limit: maintenanceBatch})
		}},
		{Name: "purged_runtime_members", Run: func(ctx context.Context, now time.Time) (int64, error) {
			return store.RuntimeMemberPurgeExpired(ctx, db.RuntimeMemberPurgeExpiredParams{ExpiredBefore: now.Add(-memberRetention), Limit: maintenanceBatch})
		}},
		{Name: "purged_ui_sessions", Run: func(ctx context.Context, now time.Time) (int64, error) {
			return store.UISessionPurgeExpired(ctx, db.UISessionPurgeExpiredParams{ExpiredBefore: now, Limit: maintenanceBatch})
		}},
	}
	result := map[string]any{"type": PublicKindMaintenance}
	for _, p := range purges {
		n, err := purgeInBatches(func() (int64, error) { return p.Run(ctx, now) })
		if err != nil {
			return Prepared{}, err
		}
		result[p.Name] = n
	}
	for _, task := range h.Tasks {
		n, err := task.Run(ctx, now)
		if err != nil {
			return Prepared{}, err
		}
		result[task.Name] = n
	}
	return Prepared{Result: Result{Code: "purged", Payload: result}}, nil
}

// purgeInBatches runs purge until a batch deletes fewer than maintenanceBatch rows; it returns the rows deleted.
func purgeInBatches(purge func() (int64, error)) (int64, error) {
	var total int64
	for {
		n, err := purge()
		if err != nil {
			return total, err
		}
		total += n
		if n < maintenanceBatch {
			return total, nil
		}
	}
}
