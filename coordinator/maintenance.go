package coordinator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/powercontext/powercontext/db"
)

// KindMaintenance is the internal kind of operation maintenance (hidden from the Operation API).
const KindMaintenance = "powercontext.maintenance.operations"

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

func (d MaintenanceDiscoverer) Name() string { return "maintenance" }

func (d MaintenanceDiscoverer) Interval() time.Duration {
	if d.Every <= 0 {
		return time.Hour
	}
	return d.Every
}

func (d MaintenanceDiscoverer) Page(context.Context, string, int) ([]EnqueueRequest, string, error) {
	return []EnqueueRequest{MaintenanceRequest()}, "", nil
}

// MaintenanceRequest is the enqueue request of the maintenance item.
func MaintenanceRequest() EnqueueRequest {
	return EnqueueRequest{LaneKey: MaintenanceLaneKey, Spec: func(context.Context, db.Queries) (*EnqueueSpec, error) {
		return &EnqueueSpec{Kind: KindMaintenance, PayloadVersion: 1, ScopeID: MaintenanceScope, LogicalKey: MaintenanceLogicalKey,
			Payload: map[string]any{}, MaxAttempts: 3}, nil
	}}
}

// MaintenanceHandler purges, in batches of at most 500 rows per statement and with cut-offs on the database clock:
// succeeded/cancelled work older than Retention (default 30 days; failed work is never purged), expired rate-limit
// windows, and runtime member rows that expired more than MemberRetention ago (default 24 hours: the rows of
// processes that died without deleting their own; a row is only read while it is live, the margin keeps a crashed
// member visible to an operator reading the table for a while).
type MaintenanceHandler struct {
	Ledger          *Ledger
	Retention       time.Duration
	MemberRetention time.Duration
}

func (h MaintenanceHandler) Kind() string                  { return KindMaintenance }
func (h MaintenanceHandler) PayloadVersions() VersionRange { return VersionRange{Min: 1, Max: 1} }

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
	items, err := purgeInBatches(func() (int64, error) {
		return h.Ledger.PurgeTerminal(ctx, now.Add(-retention), maintenanceBatch)
	})
	if err != nil {
		return Prepared{}, err
	}
	windows, err := purgeInBatches(func() (int64, error) {
		return store.RateLimitWindowPurgeExpired(ctx, db.RateLimitWindowPurgeExpiredParams{ExpiredBefore: now, Limit: maintenanceBatch})
	})
	if err != nil {
		return Prepared{}, err
	}
	members, err := purgeInBatches(func() (int64, error) {
		return store.RuntimeMemberPurgeExpired(ctx, db.RuntimeMemberPurgeExpiredParams{ExpiredBefore: now.Add(-memberRetention), Limit: maintenanceBatch})
	})
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Result: Result{Code: "purged", Payload: map[string]any{
		"purged_items": items, "purged_rate_limit_windows": windows, "purged_runtime_members": members,
	}}}, nil
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
