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

// MaintenanceHandler purges succeeded/cancelled work older than Retention (default 30 days) and expired rate-limit
// windows, in batches of at most 500. Failed work is never purged.
type MaintenanceHandler struct {
	Ledger    *Ledger
	Retention time.Duration
}

func (h MaintenanceHandler) Kind() string                  { return KindMaintenance }
func (h MaintenanceHandler) PayloadVersions() VersionRange { return VersionRange{Min: 1, Max: 1} }

func (h MaintenanceHandler) Prepare(ctx context.Context, _ db.WorkItem) (Prepared, error) {
	retention := h.Retention
	if retention <= 0 {
		retention = 30 * 24 * time.Hour
	}
	store := h.Ledger.Store()
	now, err := store.DBNow(ctx)
	if err != nil {
		return Prepared{}, err
	}
	var items, windows int64
	for {
		n, err := h.Ledger.PurgeTerminal(ctx, now.Add(-retention), maintenanceBatch)
		if err != nil {
			return Prepared{}, err
		}
		items += n
		if n < maintenanceBatch {
			break
		}
	}
	for {
		n, err := store.RateLimitWindowPurgeExpired(ctx, db.RateLimitWindowPurgeExpiredParams{ExpiredBefore: now, Limit: maintenanceBatch})
		if err != nil {
			return Prepared{}, err
		}
		windows += n
		if n < maintenanceBatch {
			break
		}
	}
	return Prepared{Result: Result{Code: "purged", Payload: map[string]any{"purged_items": items, "purged_rate_limit_windows": windows}}}, nil
}
