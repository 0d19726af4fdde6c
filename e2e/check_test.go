//go:build linux

package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/powercontext/powercontext/db"
)

// Names the checks read (docs/protocol.md#tables).
const (
	memoryKind       = "powercontext.memory.source-window"
	experienceKind   = "powercontext.experience.incubation"
	memoryCursor     = "memory-source-window"
	experienceCursor = "experience-incubation"
	leaseName        = "work-discovery"
)

func nowSQL(engine db.Engine) string {
	if engine == db.EnginePostgres {
		return "clock_timestamp()"
	}
	return "CURRENT_TIMESTAMP(6)"
}

// leaseSampler reads the scheduler lease row every interval and checks that at most one scheduler held it at a time
// and that its fence only grew.
type leaseSampler struct {
	sqlDB  *sql.DB
	engine db.Engine
	lease  time.Duration

	mu                sync.Mutex
	samples           int
	errors            int
	firstFence        int64
	lastFence         int64
	lastOwner         string
	lastExpires       time.Time // expiry of the last observed holder (zero once released)
	holders           map[string]bool
	fenceDecreases    int
	ownerWithoutFence int // owner changed while the fence stayed the same: two holders of one fence
	overlaps          int // a new holder acquired while the previous lease was provably still unexpired
	violations        []string
}

func (s *leaseSampler) run(ctx context.Context, every time.Duration) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		q := "SELECT owner_id, fence, lease_expires_at, " + nowSQL(s.engine) + " FROM pc_scheduler_leases WHERE lease_name = '" + leaseName + "'"
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			var owner sql.NullString
			var fence int64
			var expires sql.NullTime
			var now time.Time
			qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := s.sqlDB.QueryRowContext(qctx, q).Scan(&owner, &fence, &expires, &now)
			cancel()
			if err == sql.ErrNoRows {
				continue
			}
			if err != nil {
				if ctx.Err() == nil {
					s.mu.Lock()
					s.errors++
					s.mu.Unlock()
				}
				continue
			}
			s.observe(owner.String, fence, expires.Time, now)
		}
	}()
	return func() { <-done }
}

func (s *leaseSampler) violate(format string, args ...any) {
	if len(s.violations) < 20 {
		s.violations = append(s.violations, fmt.Sprintf(format, args...))
	}
}

func (s *leaseSampler) observe(owner string, fence int64, expires, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holders == nil {
		s.holders = map[string]bool{}
		s.firstFence = fence
	}
	s.samples++
	switch {
	case s.samples == 1:
	case fence < s.lastFence:
		s.fenceDecreases++
		s.violate("fence went back from %d to %d", s.lastFence, fence)
	case fence == s.lastFence && owner != "" && s.lastOwner != "" && owner != s.lastOwner:
		s.ownerWithoutFence++
		s.violate("owner changed %s → %s at the same fence %d", s.lastOwner, owner, fence)
	case fence > s.lastFence && owner != "" && !s.lastExpires.IsZero():
		// A takeover: the new holder's first observed expiry minus the lease is at or after its acquire time. If that is
		// before the last observed expiry of the previous holder, the two leases overlapped on database time.
		if acquiredBy := expires.Add(-s.lease); acquiredBy.Before(s.lastExpires.Add(-time.Millisecond)) {
			s.overlaps++
			s.violate("fence %d acquired by %s at or before %s while fence %d (%s) held it until %s",
				fence, owner, acquiredBy.Format(time.RFC3339Nano), s.lastFence, s.lastOwner, s.lastExpires.Format(time.RFC3339Nano))
		}
	}
	if owner != "" {
		s.holders[owner] = true
	}
	s.lastFence, s.lastOwner = fence, owner
	if owner == "" {
		s.lastExpires = time.Time{} // released: the next holder may take it at any time
	} else {
		s.lastExpires = expires
	}
}

// leaderOwner returns the last observed lease holder.
func (s *leaseSampler) leaderOwner() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastOwner
}

type leaseSummary struct {
	Samples, Errors, Holders, Violations int
	FirstFence, LastFence                int64
	Details                              []string
}

func (s *leaseSampler) summary() leaseSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return leaseSummary{Samples: s.samples, Errors: s.errors, Holders: len(s.holders),
		Violations: s.fenceDecreases + s.ownerWithoutFence + s.overlaps,
		FirstFence: s.firstFence, LastFence: s.lastFence, Details: append([]string(nil), s.violations...)}
}

// ---------------------------------------------------------------------------------------------------------------

// report is the outcome of the SQL checks of one round.
type report struct {
	Windows    int // committed memory windows (Memory revisions)
	ExpWindows int // committed experience windows (one candidate each)
	Kills      int
	Pauses     int
	Partitions int
	Zombies    int
	Duplicates int // extra commits of one (scope, window), memory and experience
	Lost       int // scopes whose memory or experience cursor is not at the journal head, plus gaps in revision chains
	Inversions int // revisions (or candidates) committed out of window order
	Stuck      int // running without a live lease, left non-terminal after the drain, failed without a spent budget

	Blocked            int // scopes blocked by an item whose retry budget was spent (excluded from Lost)
	Failed             int
	BudgetSpent        int
	Attempts           int
	UnfinishedAttempts int
	NoOutcome          int
	StaleCommits       int // commits not made by the item's last, succeeded attempt within its lease
	SourceMismatches   int // journal heads that disagree with what the API acknowledged
	Items              int
	Details            []string
}

func (r *report) line() string {
	return fmt.Sprintf("windows=%d kills=%d duplicates=%d lost=%d inversions=%d stuck=%d",
		r.Windows, r.Kills, r.Duplicates, r.Lost, r.Inversions, r.Stuck)
}

func (r *report) detail(format string, args ...any) {
	if len(r.Details) < 40 {
		r.Details = append(r.Details, fmt.Sprintf(format, args...))
	}
}

type itemRow struct {
	workID, kind, scope, status string
	leaseExpires                sql.NullTime
	attemptCount, genAttempts   int
	maxAttempts                 int
	resultCode                  sql.NullString
	errCategory, errCode        sql.NullString
	payload                     []byte
}

type attemptRow struct {
	workID                       string
	attemptNo                    int
	owner                        string
	fence                        int64
	started                      time.Time
	heartbeat, finished          sql.NullTime
	outcome, errCategory, errCod sql.NullString
}

type revisionRow struct {
	scope, workID  string
	revision, gen  int64
	after, through int64
	created        time.Time
}

type candidateRow struct {
	scope, workID string
	cited         []int64
	created       time.Time
}

type windowPayload struct {
	CursorGeneration int64 `json:"cursor_generation"`
	After            int64 `json:"after"`
	Through          int64 `json:"through"`
}

// queryAll runs q and calls scan for every row.
func queryAll(ctx context.Context, sqlDB *sql.DB, q string, scan func(*sql.Rows) error) error {
	rows, err := sqlDB.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return rows.Err()
}

// drained reports how many scopes still lag and how many items are not terminal.
func drained(ctx context.Context, sqlDB *sql.DB) (lagging, live int, err error) {
	q := `SELECT COUNT(*) FROM pc_source_journal_heads h
		LEFT JOIN pc_source_cursors m ON m.scope_id = h.scope_id AND m.cursor_name = '` + memoryCursor + `'
		LEFT JOIN pc_source_cursors x ON x.scope_id = h.scope_id AND x.cursor_name = '` + experienceCursor + `'
		WHERE COALESCE(m.position, 0) <> h.position OR COALESCE(x.position, 0) <> h.position`
	if err := sqlDB.QueryRowContext(ctx, q).Scan(&lagging); err != nil {
		return 0, 0, err
	}
	q = `SELECT COUNT(*) FROM pc_work_items WHERE status IN ('queued', 'running', 'retry_wait', 'cancelling')`
	if err := sqlDB.QueryRowContext(ctx, q).Scan(&live); err != nil {
		return 0, 0, err
	}
	return lagging, live, nil
}

// retryableCategory tells whether a failure category is one the fake provider or the chaos can cause legitimately.
func retryableCategory(cat string) bool {
	switch cat {
	case "provider", "lease", "internal":
		return true
	}
	return false
}

// checkInvariants reads the ledger and the domain tables and counts every violation.
func checkInvariants(ctx context.Context, engine db.Engine, sqlDB *sql.DB, workerLease time.Duration, acked, tried map[string]int) (*report, error) {
	r := &report{}
	var now time.Time
	if err := sqlDB.QueryRowContext(ctx, "SELECT "+nowSQL(engine)).Scan(&now); err != nil {
		return nil, err
	}

	heads := map[string]int64{}
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, position FROM pc_source_journal_heads`, func(rs *sql.Rows) error {
		var s string
		var p int64
		if err := rs.Scan(&s, &p); err != nil {
			return err
		}
		heads[s] = p
		return nil
	}); err != nil {
		return nil, err
	}
	sourceCount := map[string]int64{}
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, COUNT(*), MAX(journal_position) FROM pc_sources GROUP BY scope_id`, func(rs *sql.Rows) error {
		var s string
		var n, mx int64
		if err := rs.Scan(&s, &n, &mx); err != nil {
			return err
		}
		sourceCount[s] = n
		if mx != n {
			r.SourceMismatches++
			r.detail("scope %s: journal positions are not contiguous (count %d, max %d)", s, n, mx)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	cursors := map[string]map[string]int64{memoryCursor: {}, experienceCursor: {}}
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, cursor_name, position FROM pc_source_cursors`, func(rs *sql.Rows) error {
		var s, name string
		var p int64
		if err := rs.Scan(&s, &name, &p); err != nil {
			return err
		}
		if cursors[name] != nil {
			cursors[name][s] = p
		}
		return nil
	}); err != nil {
		return nil, err
	}

	items := map[string]*itemRow{}
	if err := queryAll(ctx, sqlDB, `SELECT work_id, kind, scope_id, status, lease_expires_at, attempt_count,
			generation_attempt_count, max_attempts, result_code, error_category, error_code, payload FROM pc_work_items`, func(rs *sql.Rows) error {
		it := &itemRow{}
		if err := rs.Scan(&it.workID, &it.kind, &it.scope, &it.status, &it.leaseExpires, &it.attemptCount, &it.genAttempts,
			&it.maxAttempts, &it.resultCode, &it.errCategory, &it.errCode, &it.payload); err != nil {
			return err
		}
		items[it.workID] = it
		return nil
	}); err != nil {
		return nil, err
	}
	r.Items = len(items)

	attempts := map[string][]*attemptRow{}
	if err := queryAll(ctx, sqlDB, `SELECT work_id, attempt_no, owner_id, fence, started_at, heartbeat_at, finished_at, outcome,
			error_category, error_code FROM pc_work_attempts`, func(rs *sql.Rows) error {
		a := &attemptRow{}
		if err := rs.Scan(&a.workID, &a.attemptNo, &a.owner, &a.fence, &a.started, &a.heartbeat, &a.finished, &a.outcome,
			&a.errCategory, &a.errCod); err != nil {
			return err
		}
		attempts[a.workID] = append(attempts[a.workID], a)
		r.Attempts++
		return nil
	}); err != nil {
		return nil, err
	}
	for _, as := range attempts {
		sort.Slice(as, func(i, j int) bool { return as[i].attemptNo < as[j].attemptNo })
	}

	var revisions []*revisionRow
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, work_id, revision, cursor_generation, window_after, window_through, created_at
			FROM pc_memory_revisions`, func(rs *sql.Rows) error {
		v := &revisionRow{}
		if err := rs.Scan(&v.scope, &v.workID, &v.revision, &v.gen, &v.after, &v.through, &v.created); err != nil {
			return err
		}
		revisions = append(revisions, v)
		return nil
	}); err != nil {
		return nil, err
	}
	var candidates []*candidateRow
	if err := queryAll(ctx, sqlDB, `SELECT scope_id, work_id, cited_positions, created_at FROM pc_experience_candidates`, func(rs *sql.Rows) error {
		c := &candidateRow{}
		var cited []byte
		if err := rs.Scan(&c.scope, &c.workID, &cited, &c.created); err != nil {
			return err
		}
		if err := json.Unmarshal(cited, &c.cited); err != nil || len(c.cited) == 0 {
			return fmt.Errorf("candidate of %s: cited positions %q", c.workID, cited)
		}
		candidates = append(candidates, c)
		return nil
	}); err != nil {
		return nil, err
	}
	r.Windows, r.ExpWindows = len(revisions), len(candidates)

	// Items: stuck, failed (budget spent or not), leftover live work. Scopes blocked by a spent budget are excluded
	// from lost (the lane is blocked on purpose, docs/protocol.md#state-machine) but reported.
	blocked := map[string]map[string]bool{memoryCursor: {}, experienceCursor: {}}
	for _, it := range items {
		switch it.status {
		case "running", "cancelling":
			if !it.leaseExpires.Valid || !it.leaseExpires.Time.After(now) {
				r.Stuck++
				r.detail("stuck: %s %s %s without an unexpired lease", it.kind, it.workID, it.status)
			} else {
				r.Stuck++
				r.detail("stuck: %s %s still %s after the drain", it.kind, it.workID, it.status)
			}
		case "queued", "retry_wait":
			r.Stuck++
			r.detail("stuck: %s %s still %s after the drain", it.kind, it.workID, it.status)
		case "failed":
			r.Failed++
			spent := it.genAttempts >= it.maxAttempts && retryableCategory(it.errCategory.String)
			if spent {
				r.BudgetSpent++
				switch it.kind {
				case memoryKind:
					blocked[memoryCursor][it.scope] = true
				case experienceKind:
					blocked[experienceCursor][it.scope] = true
				}
			} else {
				r.Stuck++
			}
			r.detail("failed: %s %s scope %s attempts %d/%d error %s/%s (budget spent: %v)", it.kind, it.workID, it.scope,
				it.genAttempts, it.maxAttempts, it.errCategory.String, it.errCode.String, spent)
		}
	}

	// Lost: every scope's cursors at its journal head; journal heads agree with what the API acknowledged.
	for scope, head := range heads {
		for _, name := range []string{memoryCursor, experienceCursor} {
			if cur := cursors[name][scope]; cur != head {
				if blocked[name][scope] {
					r.Blocked++
					continue
				}
				r.Lost++
				r.detail("lost: scope %s %s cursor %d, journal head %d", scope, name, cur, head)
			}
		}
		if sourceCount[scope] != head {
			r.SourceMismatches++
			r.detail("scope %s: head %d but %d sources", scope, head, sourceCount[scope])
		}
	}
	for scope, n := range acked {
		if h := heads[scope]; h < int64(n) || h > int64(tried[scope]) {
			r.SourceMismatches++
			r.detail("scope %s: journal head %d outside [acknowledged %d, sent %d]", scope, h, n, tried[scope])
		}
	}

	// commitOK checks that a commit (revision or candidate) of workID at created came from the item's last attempt,
	// which succeeded and was the only one to, while its lease was alive: a stale claim never commits.
	const slack = 2 * time.Second
	commitOK := func(what, workID string, created time.Time) {
		it := items[workID]
		if it == nil {
			r.StaleCommits++
			r.detail("stale commit: %s of unknown item %s", what, workID)
			return
		}
		as := attempts[workID]
		if it.status != "succeeded" || len(as) == 0 || len(as) != it.attemptCount {
			r.StaleCommits++
			r.detail("stale commit: %s of item %s status %s attempts %d/%d", what, workID, it.status, len(as), it.attemptCount)
			return
		}
		last := as[len(as)-1]
		succeeded := 0
		for _, a := range as {
			if a.outcome.String == "succeeded" {
				succeeded++
			}
		}
		beat := last.started
		if last.heartbeat.Valid && last.heartbeat.Time.After(beat) {
			beat = last.heartbeat.Time
		}
		switch {
		case last.outcome.String != "succeeded" || succeeded != 1:
			r.StaleCommits++
			r.detail("stale commit: %s of item %s: last attempt %d outcome %q, %d succeeded attempts", what, workID,
				last.attemptNo, last.outcome.String, succeeded)
		case created.Before(last.started.Add(-slack)) || created.After(beat.Add(workerLease+slack)):
			r.StaleCommits++
			r.detail("stale commit: %s of item %s at %s outside attempt %d's lease (started %s, last beat %s)", what, workID,
				created.Format(time.RFC3339Nano), last.attemptNo, last.started.Format(time.RFC3339Nano), beat.Format(time.RFC3339Nano))
		}
	}

	// Memory: one revision per (scope, window_after, cursor_generation); revision order = window order; no gaps.
	byScope := map[string][]*revisionRow{}
	seen := map[string]int{}
	for _, v := range revisions {
		byScope[v.scope] = append(byScope[v.scope], v)
		key := fmt.Sprintf("%s\x00%d\x00%d", v.scope, v.after, v.gen)
		seen[key]++
		if seen[key] > 1 {
			r.Duplicates++
			r.detail("duplicate: scope %s memory window after %d generation %d committed %d times", v.scope, v.after, v.gen, seen[key])
		}
		commitOK(fmt.Sprintf("memory revision %d of %s", v.revision, v.scope), v.workID, v.created)
		if it := items[v.workID]; it != nil {
			var p windowPayload
			if json.Unmarshal(it.payload, &p) != nil || p.After != v.after || p.CursorGeneration != v.gen || p.Through != v.through {
				r.StaleCommits++
				r.detail("revision %d of %s does not match its item's window %s", v.revision, v.scope, it.payload)
			}
		}
	}
	for scope, vs := range byScope {
		sort.Slice(vs, func(i, j int) bool { return vs[i].revision < vs[j].revision })
		for i, v := range vs {
			if v.revision != int64(i+1) {
				r.Lost++
				r.detail("scope %s: revision numbers skip to %d", scope, v.revision)
				break
			}
		}
		for i := 1; i < len(vs); i++ {
			prev, v := vs[i-1], vs[i]
			switch {
			case v.after < prev.after:
				r.Inversions++
				r.detail("inversion: scope %s revision %d window (%d,%d] after revision %d window (%d,%d]", scope,
					v.revision, v.after, v.through, prev.revision, prev.after, prev.through)
			case v.after > prev.through:
				r.Lost++
				r.detail("gap: scope %s revision %d starts at %d but revision %d ended at %d", scope, v.revision, v.after, prev.revision, prev.through)
			}
		}
		if len(vs) > 0 && vs[0].after != 0 {
			r.Lost++
			r.detail("gap: scope %s first revision starts at %d", scope, vs[0].after)
		}
	}
	for _, it := range items {
		if it.kind == memoryKind && it.status == "succeeded" && it.resultCode.String == "processed" {
			n := 0
			for _, v := range byScope[it.scope] {
				if v.workID == it.workID {
					n++
				}
			}
			if n != 1 {
				r.Duplicates += max(0, n-1)
				if n == 0 {
					r.Lost++
				}
				r.detail("memory item %s processed but has %d revisions", it.workID, n)
			}
		}
	}

	// Experience: every window with task outcomes yields exactly one candidate citing the window's first position.
	expByScope := map[string][]*candidateRow{}
	perWindow := map[string]int{}
	perItem := map[string]int{}
	for _, c := range candidates {
		expByScope[c.scope] = append(expByScope[c.scope], c)
		key := fmt.Sprintf("%s\x00%d", c.scope, c.cited[0])
		perWindow[key]++
		perItem[c.workID]++
		if perWindow[key] > 1 {
			r.Duplicates++
			r.detail("duplicate: scope %s experience window starting at %d committed %d times", c.scope, c.cited[0], perWindow[key])
		}
		commitOK(fmt.Sprintf("experience candidate of %s", c.scope), c.workID, c.created)
		if it := items[c.workID]; it != nil {
			var p windowPayload
			if json.Unmarshal(it.payload, &p) != nil || c.cited[0] != p.After+1 {
				r.StaleCommits++
				r.detail("candidate of %s cites %d outside its item's window %s", c.scope, c.cited[0], it.payload)
			}
		}
	}
	for _, it := range items {
		if it.kind == experienceKind && it.status == "succeeded" && it.resultCode.String == "processed" && perItem[it.workID] != 1 {
			if perItem[it.workID] == 0 {
				r.Lost++
			}
			r.detail("experience item %s processed but has %d candidates", it.workID, perItem[it.workID])
		}
	}
	for scope, cs := range expByScope {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].created.Before(cs[j].created) })
		for i := 1; i < len(cs); i++ {
			if cs[i].cited[0] < cs[i-1].cited[0] && cs[i].created.After(cs[i-1].created) {
				r.Inversions++
				r.detail("inversion: scope %s experience window at %d committed after window at %d", scope, cs[i].cited[0], cs[i-1].cited[0])
			}
		}
	}

	// Attempts: every finished attempt has an outcome and vice versa; after the drain every attempt is finished;
	// attempt numbers are 1..attempt_count.
	for workID, as := range attempts {
		it := items[workID]
		for i, a := range as {
			if a.finished.Valid != a.outcome.Valid {
				r.NoOutcome++
				r.detail("attempt %s/%d: finished %v but outcome %q", workID, a.attemptNo, a.finished.Valid, a.outcome.String)
			}
			if !a.finished.Valid {
				r.UnfinishedAttempts++
				r.detail("attempt %s/%d (owner %s) never finished", workID, a.attemptNo, a.owner)
			}
			if a.attemptNo != i+1 {
				r.NoOutcome++
				r.detail("item %s: attempt numbers skip to %d", workID, a.attemptNo)
			}
		}
		if it != nil && len(as) != it.attemptCount {
			r.NoOutcome++
			r.detail("item %s: %d attempt rows for attempt_count %d", workID, len(as), it.attemptCount)
		}
	}
	return r, nil
}

func joinDetails(ds []string) string {
	if len(ds) == 0 {
		return "(none)"
	}
	return "\n  " + strings.Join(ds, "\n  ")
}
