package coordinator

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/db"
)

// Membership keeps this process's pc_runtime_members row alive (docs/protocol.md#membership): an upsert every Interval with a TTL
// on database time, deleted on stop.
type Membership struct {
	store    db.Store
	self     db.RuntimeMember
	interval time.Duration
	ttl      time.Duration
	log      zerolog.Logger
	refresh  func(ctx context.Context, self *db.RuntimeMember)
}

// SetRefresh installs fn, called before every beat to update the advertised row (the schema range follows the
// database: docs/protocol.md#membership). Call it before Run.
func (m *Membership) SetRefresh(fn func(ctx context.Context, self *db.RuntimeMember)) { m.refresh = fn }

// NewMembership returns the membership of self (MemberID, Role, versions; times are filled in).
func NewMembership(store db.Store, self db.RuntimeMember, interval, ttl time.Duration, log zerolog.Logger) *Membership {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	return &Membership{store: store, self: self, interval: interval, ttl: ttl, log: log.With().Str("component", "membership").Logger()}
}

// Self returns this member's row as last written.
func (m *Membership) Self() db.RuntimeMember { return m.self }

// Beat upserts the row once.
func (m *Membership) Beat(ctx context.Context) error {
	now, err := m.store.DBNow(ctx)
	if err != nil {
		return err
	}
	if m.refresh != nil {
		m.refresh(ctx, &m.self)
	}
	if m.self.StartedAt.IsZero() {
		m.self.StartedAt = now
	}
	m.self.HeartbeatAt = now
	m.self.ExpiresAt = now.Add(m.ttl)
	return m.store.RuntimeMemberUpsert(ctx, m.self)
}

// Run beats every interval until ctx is done, then deletes the row.
func (m *Membership) Run(ctx context.Context) error {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_, err := m.store.RuntimeMemberDelete(dctx, m.self.MemberID)
			return err
		case <-t.C:
			if err := m.Beat(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn().Str("error_class", ErrorClass(err)).Msg("membership heartbeat failed")
			}
		}
	}
}

// LiveMembers lists members whose row has not expired on database time, ordered by role then id.
func LiveMembers(ctx context.Context, store db.Store) ([]db.RuntimeMember, error) {
	now, err := store.DBNow(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := store.RuntimeMemberListLive(ctx, now)
	if err != nil {
		return nil, err
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].Role != ms[j].Role {
			return ms[i].Role < ms[j].Role
		}
		return ms[i].MemberID < ms[j].MemberID
	})
	return ms, nil
}

// Readiness states.
const (
	ReadyReady         = "ready"
	ReadyDegraded      = "degraded"
	ReadyNotReady      = "not_ready"
	ReadyMisconfigured = "misconfigured"
)

// MembershipCheck evaluates live members for the readiness of a process with role selfRole
// (docs/protocol.md#membership): misconfigured when the members cannot work together — no schema version lies in
// every member's schema range, or no payload version in every member's payload range — except that disjoint schema
// ranges are only degraded (schema_refresh_pending) while a member has not beaten since a newer build started
// (staleSchemaRange); for an api, degraded when no
// scheduler or no worker is live (role all counts as both); degraded while members differ at all (a rolling
// upgrade: other builds, behaviour revisions or ranges that still overlap). It returns the state and a short bounded
// reason.
func MembershipCheck(members []db.RuntimeMember, selfRole string) (string, string) {
	if len(members) == 0 {
		return ReadyNotReady, "no_live_members"
	}
	first := members[0]
	schemaLo, schemaHi := first.SchemaMin, first.SchemaMax
	payloadLo, payloadHi := first.PayloadMin, first.PayloadMax
	mixed := false
	for _, m := range members[1:] {
		schemaLo, schemaHi = max(schemaLo, m.SchemaMin), min(schemaHi, m.SchemaMax)
		payloadLo, payloadHi = max(payloadLo, m.PayloadMin), min(payloadHi, m.PayloadMax)
		mixed = mixed || m.BuildVersion != first.BuildVersion || m.BehaviorRevision != first.BehaviorRevision ||
			m.SchemaMin != first.SchemaMin || m.SchemaMax != first.SchemaMax || m.PayloadMin != first.PayloadMin ||
			m.PayloadMax != first.PayloadMax
	}
	if payloadLo > payloadHi {
		return ReadyMisconfigured, "version_range_mismatch"
	}
	if schemaLo > schemaHi {
		if staleSchemaRange(members) {
			return ReadyDegraded, "schema_refresh_pending"
		}
		return ReadyMisconfigured, "version_range_mismatch"
	}
	if selfRole == "api" {
		var sched, work bool
		for _, m := range members {
			sched = sched || m.Role == "scheduler" || m.Role == "all"
			work = work || m.Role == "worker" || m.Role == "all"
		}
		switch {
		case !sched && !work:
			return ReadyDegraded, "no_scheduler_no_worker"
		case !sched:
			return ReadyDegraded, "no_scheduler"
		case !work:
			return ReadyDegraded, "no_worker"
		}
	}
	if mixed {
		return ReadyDegraded, "mixed_versions"
	}
	return ReadyReady, "ok"
}

// staleSchemaRange reports whether the schema ranges are disjoint only because some members advertised theirs
// before a migration: every member whose range ends below the highest lower bound last beat before the member with
// that bound started. A member reads the schema at every beat, after the beat's clock, and a binary whose range starts
// at a newer version starts only once the database is migrated to it; so a range read before that start may still
// reach the new version on the next beat (an expand migration, which older binaries accept), and is not a verdict
// yet. Once every such member has beaten since, disjoint ranges are misconfigured (docs/protocol.md#membership).
func staleSchemaRange(members []db.RuntimeMember) bool {
	newest := members[0]
	for _, m := range members[1:] {
		if m.SchemaMin > newest.SchemaMin || (m.SchemaMin == newest.SchemaMin && m.StartedAt.After(newest.StartedAt)) {
			newest = m
		}
	}
	for _, m := range members {
		if m.SchemaMax < newest.SchemaMin && !m.HeartbeatAt.Before(newest.StartedAt) {
			return false
		}
	}
	return true
}

// ErrRuntimeAlreadyRunning is returned when another single-node runtime holds the database.
type ErrRuntimeAlreadyRunning struct{ Holder string }

func (e *ErrRuntimeAlreadyRunning) Error() string {
	return fmt.Sprintf("another single-node runtime (member %s) is already running on this database; stop it first or use distributed mode", e.Holder)
}

// AcquireSingleNode takes the single-node-runtime lease for owner or reports who holds it.
func (l *Ledger) AcquireSingleNode(ctx context.Context, owner string, ttl time.Duration) (LeaseToken, error) {
	res, err := l.AcquireLease(ctx, LeaseSingleNodeRuntime, owner, ttl)
	if err != nil {
		return LeaseToken{}, err
	}
	if !res.Acquired {
		return LeaseToken{}, &ErrRuntimeAlreadyRunning{Holder: res.HolderID}
	}
	return res.Token, nil
}
