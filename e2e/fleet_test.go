//go:build linux

package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/enginetest"
)

// Fleet timings (short, so leases expire and leaders change many times in a few minutes).
const (
	workerLease      = 4 * time.Second
	workerGrace      = 3 * time.Second // SIGTERM shutdown grace (< lease)
	schedulerLease   = 3 * time.Second
	workerMaxAttempt = 10 // the ~10% provider failures plus chaos never spend it in practice
)

// roundMode is what a round does to the fleet.
type roundMode int

const (
	// modeChaos kills, freezes, partitions and drains processes (chaos_test.go).
	modeChaos roundMode = iota //nolint:unused // the zero value: a round that names no mode is a chaos round
	// modeDatabase kills and stops the round's private database server (dbfault_test.go).
	modeDatabase
	// modeSkew is modeChaos with the clocks of some processes shifted and stepped (skew_test.go).
	modeSkew
)

// variant sizes one round.
type variant struct {
	name        string
	mode        roundMode
	chaos       time.Duration // how long processes are killed, frozen and restarted
	maxChaos    time.Duration // the chaos goes on up to this long until minWindows and minKills are reached (and longer, up to 3×, while windows are still being committed)
	scopes      int
	loaders     int
	minWindows  int // committed memory windows required
	minKills    int
	freezeEvery [2]time.Duration // freeze a worker or the scheduler leader past its lease every [min, max)
	// Shares of the freezes: the scheduler leader (else a worker); a worker becomes a zombie (cut off its database
	// the moment the provider answers it, so its commit arrives after another worker re-ran the window); else a
	// random database partition; else SIGSTOP.
	freezeSchedulers, zombieShare, partitionShare float64
	zombieSchema                                  string        // zombies only on this provider schema ("" = any)
	zombieHold                                    time.Duration // long enough for another worker to expire and re-run the window
	maxFrozenWorkers                              int           // at most this many workers frozen at once
	drainTimeout                                  time.Duration // the drain waits this long, and longer (up to 3×) while it makes progress
	budget                                        time.Duration // expected wall time per engine (reported)

	// modeDatabase: the faults, in order, each after dbGap of steady load (the first after warmWindows commits).
	dbFaults    []dbFault
	dbGap       time.Duration
	warmWindows int
	// modeSkew: PC_TEST_CLOCK_SKEW per process name (worker-0, scheduler-1, …).
	skews map[string]string
}

var (
	shortVariant = variant{name: "short", chaos: 60 * time.Second, maxChaos: 120 * time.Second, scopes: 60, loaders: 6, minWindows: 300, minKills: 15,
		freezeEvery: [2]time.Duration{2 * time.Second, 5 * time.Second}, freezeSchedulers: 0.2, zombieShare: 0.4, partitionShare: 0.5,
		zombieHold: workerLease + 3*time.Second, maxFrozenWorkers: 2, drainTimeout: 60 * time.Second, budget: 3 * time.Minute}
	longVariant = variant{name: "long", chaos: 240 * time.Second, maxChaos: 360 * time.Second, scopes: 80, loaders: 6, minWindows: 1000, minKills: 50,
		freezeEvery: [2]time.Duration{2 * time.Second, 5 * time.Second}, freezeSchedulers: 0.2, zombieShare: 0.4, partitionShare: 0.5,
		zombieHold: workerLease + 3*time.Second, maxFrozenWorkers: 2, drainTimeout: 120 * time.Second, budget: 7 * time.Minute}
	// The broken round makes zombies of experience attempts (no unique key guards experience candidates; memory
	// revisions are also guarded by their (scope_id, revision) key), so stale claims reach Complete and commit twice.
	// One zombie at a time, held long, so the other workers have time to re-run its window before its stale commit
	// arrives (a zombie whose commit lands first is reported as a stale commit instead).
	brokenVariant = variant{name: "broken", chaos: 90 * time.Second, maxChaos: 90 * time.Second, scopes: 30, loaders: 6,
		freezeEvery: [2]time.Duration{500 * time.Millisecond, time.Second}, freezeSchedulers: 0.05, zombieShare: 0.9, partitionShare: 0.5,
		zombieSchema: "experience_candidates", zombieHold: workerLease + 6*time.Second, maxFrozenWorkers: 1,
		drainTimeout: 60 * time.Second, budget: 2*time.Minute + 30*time.Second}
)

func longMode() bool { return os.Getenv("E2E_LONG") == "1" }

var fleetEngines = []db.Engine{db.EngineMySQL, db.EnginePostgres}

// TestFleet is the distributed proof: on MariaDB and on PostgreSQL a real fleet (2 api, 2 scheduler, 3 worker
// processes) runs under chaos (SIGKILL + restart, SIGSTOP, database partitions, zombie workers, one SIGTERM drain)
// and the SQL checks must find no lost, duplicated or reordered window, nothing stuck, no commit by a stale claim,
// and a fenced scheduler lease. E2E_LONG=1 runs the long variant.
func TestFleet(t *testing.T) {
	fleetTest(t, shortVariant, longVariant, nil, func(t *testing.T, res roundResult, v variant) {
		res.requireClean(t, v)
		require.NoError(t, res.drainErr, "SIGTERM drain of a worker")
		require.NotEmpty(t, res.drainOwner, "no worker was drained with SIGTERM in the middle of work")
		require.GreaterOrEqual(t, res.report.Kills, v.minKills, "SIGKILLs")
	})
}

// fleetTest builds the binary (with tags), runs the short variant (the long one with E2E_LONG=1) on every fleet
// engine and hands each round's result to check.
func fleetTest(t *testing.T, short, long variant, tags []string, check func(t *testing.T, res roundResult, v variant)) {
	if testing.Short() {
		t.Skip("e2e fleet: skipped with -short")
	}
	v := short
	if longMode() {
		v = long
	}
	bin := buildBinary(t, t.TempDir(), "powercontext-"+v.name, tags...)
	for _, engine := range fleetEngines {
		t.Run(string(engine), func(t *testing.T) { check(t, runRound(t, engine, bin, v), v) })
	}
}

// startSampler samples the scheduler lease row of the database at u every 100 ms until the returned stop is called.
func (r *round) startSampler(u dburl.URL) (stop func()) {
	sampleDB := enginetest.OpenSQLDB(r.t, u)
	sampleDB.SetMaxOpenConns(1)
	r.sampler = &leaseSampler{sqlDB: sampleDB, engine: r.engine, lease: schedulerLease}
	ctx, cancel := context.WithCancel(context.Background())
	wait := r.sampler.run(ctx, 100*time.Millisecond)
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wait() }) }
	r.t.Cleanup(stop)
	return stop
}

// requireClean fails t on any protocol violation, service fault or missed minimum of the round, after recording
// each as a cause of the round's verdict.
func (res roundResult) requireClean(t *testing.T, v variant) {
	r := res.report
	vd := res.verdict
	counters := []struct {
		name string
		n    int
	}{{"duplicates", r.Duplicates}, {"lost", r.Lost}, {"inversions", r.Inversions}, {"stuck", r.Stuck},
		{"stale_commits", r.StaleCommits}, {"attempts_without_outcome", r.NoOutcome + r.UnfinishedAttempts},
		{"source_mismatches", r.SourceMismatches}, {"lease_violations", res.lease.Violations}}
	for _, c := range counters {
		if c.n > 0 {
			first := firstDetail(r.Details, c.name)
			if c.name == "lease_violations" {
				first = firstDetail(res.lease.Details, "")
			}
			if (c.name == "stuck" || c.name == "lost") && res.drainCut {
				vd.cause("harness: %s=%d after the drain was cut by the time budget while still progressing (%s)", c.name, c.n, first)
				continue
			}
			vd.cause("protocol: %s=%d (%s)", c.name, c.n, first)
		}
	}
	if len(res.unexpected) > 0 {
		vd.cause("service: %d processes exited on their own (%s)", len(res.unexpected), res.unexpected[0])
	}
	if len(res.panics) > 0 {
		vd.cause("service: %d panics in process logs (%s)", len(res.panics), res.panics[0])
	}
	if res.providerBad > 0 {
		vd.cause("service: %d malformed provider requests", res.providerBad)
	}
	switch {
	case res.history.Result == porcupine.Illegal:
		vd.cause("protocol: history not linearizable (%s)", res.history.detail())
	case !res.history.ok():
		vd.cause("harness: history not checked (%s)", res.history.detail())
	}
	for _, h := range res.harness {
		vd.cause("harness: %s", h)
	}
	if r.Windows < v.minWindows {
		vd.cause("harness: %d memory windows committed, the round needs %d (the machine was too slow for the time budget)", r.Windows, v.minWindows)
	}
	require.Zero(t, r.Duplicates, "duplicate commits:%s", joinDetails(r.Details))
	require.Zero(t, r.Lost, "lost windows:%s", joinDetails(r.Details))
	require.Zero(t, r.Inversions, "lane inversions:%s", joinDetails(r.Details))
	require.Zero(t, r.Stuck, "stuck items:%s", joinDetails(r.Details))
	require.Zero(t, r.StaleCommits, "commits by stale claims:%s", joinDetails(r.Details))
	require.Zero(t, r.NoOutcome+r.UnfinishedAttempts, "attempts without an outcome:%s", joinDetails(r.Details))
	require.Zero(t, r.SourceMismatches, "journal heads disagree with acknowledged captures:%s", joinDetails(r.Details))
	require.Zero(t, res.lease.Violations, "scheduler lease violations:%s", joinDetails(res.lease.Details))
	require.True(t, res.history.ok(), "history: %s %s", res.history.line(), res.history.detail())
	require.Empty(t, res.unexpected, "processes exited on their own")
	require.Empty(t, res.panics, "panics in process logs")
	require.Zero(t, res.providerBad, "malformed provider requests")
	require.Greater(t, res.lease.Samples, 100, "scheduler lease samples")
	require.GreaterOrEqual(t, r.Windows, v.minWindows, "committed memory windows")
}

// firstDetail returns the first finding that mentions the counter (by its usual wording), or the first finding.
func firstDetail(ds []string, counter string) string {
	words := map[string]string{"duplicates": "duplicate", "lost": "lost", "inversions": "inversion", "stuck": "stuck",
		"stale_commits": "stale commit", "attempts_without_outcome": "attempt", "source_mismatches": "scope"}
	for _, d := range ds {
		if w := words[counter]; w != "" && strings.Contains(d, w) {
			return d
		}
	}
	if len(ds) > 0 {
		return ds[0]
	}
	return "no detail"
}

// TestFleetBrokenBuildReportsDuplicates proves the harness can fail: the same chaos against a binary built with
// -tags unsafe_nofence (no claim verification in Complete, no cursor compare-and-set in Advance) must be reported
// as duplicate commits (or lost windows or inversions). Runs with E2E_BROKEN=1 or in the long variant.
//
// The duplicates show up as Experience candidates: a Memory commit is also refused by the pc_memory_revisions key
// (scope_id, revision), because a re-run of the same window computes the same next revision number, so with both
// guards removed a zombie's memory commit still fails (or, if it lands first, is reported as a stale commit).
func TestFleetBrokenBuildReportsDuplicates(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e fleet: skipped with -short")
	}
	if os.Getenv("E2E_BROKEN") != "1" && !longMode() {
		t.Skip("set E2E_BROKEN=1 (or E2E_LONG=1) to run the broken-build round")
	}
	bin := buildBinary(t, t.TempDir(), "powercontext-unsafe", "unsafe_nofence")
	for _, engine := range fleetEngines {
		t.Run(string(engine), func(t *testing.T) {
			res := runRound(t, engine, bin, brokenVariant)
			r := res.report
			if r.Duplicates+r.Lost+r.Inversions == 0 {
				res.verdict.cause("harness: the broken build was not caught (stale commits seen: %d)", r.StaleCommits)
			}
			if res.history.Result != porcupine.Illegal {
				res.verdict.cause("harness: the history checker did not reject the broken build (%s %s)", res.history.line(), res.history.detail())
			}
			require.Positive(t, r.Duplicates+r.Lost+r.Inversions,
				"the broken build must be caught (duplicates, lost or inversions); stale commits seen: %d%s", r.StaleCommits, joinDetails(r.Details))
			require.Equal(t, porcupine.Illegal, res.history.Result, "the history checker must reject the broken build's history: %s %s",
				res.history.line(), res.history.detail())
		})
	}
}

// roundResult is everything a round observed.
type roundResult struct {
	report      *report
	lease       leaseSummary
	unexpected  []string
	panics      []string
	drainErr    error
	drainOwner  string
	drainCut    bool     // the drain stopped at the time budget while still making progress
	harness     []string // budget findings of the harness itself
	providerBad int64
	verdict     *verdict
	db          *dbFaultResult // modeDatabase
	skew        *skewResult    // modeSkew
	history     historyVerdict // porcupine's verdict on the round's history
}

// runRound runs one fleet on a fresh database of engine with the binary bin and returns what the checks found:
// migrate, start the fake provider and the fleet, drive load through both APIs under the round's faults, drain,
// check with SQL.
func runRound(t *testing.T, engine db.Engine, bin string, v variant) roundResult {
	started := time.Now()
	r := &round{t: t, engine: engine, v: v, armed: map[int]chan struct{}{}, killsByRole: map[string]int{}, budget: newBudget(t)}
	r.setPhase("setup")
	vd := newVerdict(t, v.name, string(engine), r.getPhase)
	// 1. the database, migrated with the binary as an operator would; 2. the fake provider; 3. the fleet.
	u := r.setup(bin, v.mode == modeDatabase, 500*time.Millisecond, 0.10)
	t.Logf("%s: fleet of %d processes up in %s (logs in %s)", engine, len(r.fl.procs), time.Since(started).Round(time.Millisecond), r.logDir)
	stopSampling := r.startSampler(u)

	// 4. load through both API replicas, under 5. the round's faults.
	scopes := make([]string, v.scopes)
	for i := range scopes {
		scopes[i] = fmt.Sprintf("e2e/scope-%03d", i)
	}
	ld := newLoad(r.apis, scopes)
	var dbRes *dbFaultResult
	var skewRes *skewResult
	var stopObserving func()
	switch v.mode {
	case modeDatabase:
		ld.rec = newAPIRecorder()
		stopObserving = r.observeReadiness()
	case modeSkew:
		stopObserving = r.probeClocks()
	}
	loadCtx, stopLoad := context.WithCancel(context.Background())
	defer stopLoad()
	loadStarted := time.Now()
	waitLoad := ld.run(loadCtx, v.loaders)
	r.setPhase("faults")
	if v.mode == modeDatabase {
		dbRes = r.dbFaults(ld)
	} else {
		r.chaos()
	}

	// 6. stop the load, let the fleet drain, check with SQL.
	stopLoad()
	waitLoad()
	r.setPhase("drain")
	drainTook, drainCut := r.waitDrained()
	r.checkAlive()
	if v.mode == modeSkew {
		r.awaitClockSteps(30 * time.Second)
	}
	if stopObserving != nil {
		stopObserving()
	}
	stopSampling()

	r.setPhase("checks")
	acked, tried := ld.sourceCounts()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := checkInvariants(ctx, engine, r.sqlDB, workerLease, acked, tried)
	require.NoError(t, err)
	rep.Kills, rep.Pauses, rep.Partitions, rep.Zombies = int(r.kills.Load()), int(r.pauses.Load()), int(r.partitions.Load()), int(r.zombies.Load())
	drainOutcomes := attemptOutcomes(ctx, t, r.sqlDB, r.drainOwner)
	if os.Getenv("E2E_DEBUG") == "1" {
		t.Logf("%s %s timeline (5 s buckets: memory created/succeeded, experience created/succeeded):\n%s", v.name, engine, timeline(ctx, t, r.sqlDB))
	}
	r.setPhase("stopping the fleet")
	r.fl.stopAll(15 * time.Second)
	panics, errorLines := r.fl.scanLogs()

	// The history: the load's operations, completed with the database's commits and final state (the fleet is
	// stopped, so nothing moves while it is read), checked with porcupine.
	r.setPhase("history check")
	hv := historyVerdict{}
	hctx, hcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer hcancel()
	ops, unanswered, err := completeHistory(hctx, r.sqlDB, ld.hist.list(), loadStarted)
	if err != nil {
		hv.Err = err
	} else {
		hv = checkHistory(ops, 2*time.Minute, historyDir(), v.name+"-"+string(engine))
		hv.Unanswered = unanswered
	}
	t.Logf("%s %s history: %s, checked in %s %s; %s; %d captures landed without an answer", v.name, engine, hv.line(),
		hv.Took.Round(time.Millisecond), hv.detail(), kinds(ops), hv.Unanswered)
	lease := r.sampler.summary()
	if v.mode == modeDatabase {
		dbRes.finish(r, ld.rec)
	}
	if v.mode == modeSkew {
		skewRes = r.skewFindings()
	}

	// Report: the summary line (also on stdout, so `make e2e` shows it), then the details.
	line := rep.line() + " " + hv.line()
	elapsed := time.Since(started)
	t.Logf("%s %s: %s", v.name, engine, line)
	t.Logf("%s %s detail: exp_windows=%d pauses=%d partitions=%d zombies=%d kills_by_role=%s stale_commits=%d failed=%d "+
		"budget_spent=%d blocked=%d attempts=%d items=%d lease_samples=%d lease_holders=%d fence=%d..%d lease_violations=%d "+
		"lease_sample_errors=%d drain_sigterm=[attempt outcomes %v, err %v] drain_wait=%s provider_calls=%d provider_failures=%d "+
		"captures=%d flushes=%d api_conn_retries=%d api_5xx=%d error_log_lines=%d elapsed=%s (budget %s)",
		v.name, engine, rep.ExpWindows, rep.Pauses, rep.Partitions, rep.Zombies, sortedCounts(r.killsByRoleCopy()), rep.StaleCommits,
		rep.Failed, rep.BudgetSpent, rep.Blocked, rep.Attempts, rep.Items, lease.Samples, lease.Holders, lease.FirstFence,
		lease.LastFence, lease.Violations, lease.Errors, drainOutcomes, r.drainErr, drainTook.Round(time.Millisecond),
		r.prov.calls.Load(), r.prov.failures.Load(), ld.captures.Load(), ld.flushes.Load(), ld.connErrors.Load(),
		ld.serverErrors.Load(), errorLines, elapsed.Round(time.Second), v.budget)
	t.Logf("%s %s API answers: %s", v.name, engine, sortedCounts(ld.statusCounts()))
	if len(rep.Details) > 0 {
		t.Logf("%s %s findings:%s", v.name, engine, joinDetails(rep.Details))
	}
	if len(lease.Details) > 0 {
		t.Logf("%s %s lease findings:%s", v.name, engine, joinDetails(lease.Details))
	}
	if dbRes != nil {
		line += " " + dbRes.line()
		dbRes.log(t, v.name, string(engine))
	}
	if skewRes != nil {
		line += " " + skewRes.line()
		skewRes.log(t, v.name, string(engine))
	}
	fmt.Printf("%s %s: %s\n", v.name, engine, line)
	vd.summary(line)
	if elapsed > v.budget {
		t.Logf("%s %s: round took %s, over its %s budget", v.name, engine, elapsed.Round(time.Second), v.budget)
	}
	return roundResult{report: rep, lease: lease, unexpected: r.unexpectedCopy(), panics: panics, drainErr: r.drainErr,
		drainOwner: r.drainOwner, drainCut: drainCut, harness: r.harnessCopy(), providerBad: r.prov.badRequests.Load(),
		verdict: vd, db: dbRes, skew: skewRes, history: hv}
}

// setup creates the round's database (on a private server when private is set, else a fresh database on the
// shared test server), migrates it with the binary, starts the fake provider (latency up to maxLatency, failRate
// retryable failures) and the fleet, and opens the harness's own pool for the checks.
func (r *round) setup(bin string, private bool, maxLatency time.Duration, failRate float64) dburl.URL {
	t := r.t
	if private {
		r.srv = newDBServer(t, r.engine)
		r.rawURL = r.srv.createDatabase("e2e")
	} else {
		r.rawURL = enginetest.NewDatabase(t, r.engine) // skips (or fails when required) if the engine is unavailable
	}
	r.keepLogsOnFailure()
	out, err := exec.Command(bin, "server", "migrate", "--database-url", r.rawURL).CombinedOutput()
	require.NoError(t, err, "server migrate: %s", out)
	t.Logf("server migrate: %s", strings.TrimSpace(string(out)))
	r.prov = newFakeProvider(t, maxLatency, failRate)
	r.setPhase("fleet start")
	r.startFleet(bin)
	u := enginetest.ParseURL(t, r.rawURL)
	r.sqlDB = enginetest.OpenSQLDB(t, u)
	return u
}

// sortedCounts renders a count map as [k=v …] in key order.
func sortedCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// attemptOutcomes counts the outcomes of the attempts owned by member.
func attemptOutcomes(ctx context.Context, t *testing.T, sqlDB *sql.DB, member string) map[string]int {
	out := map[string]int{}
	if member == "" {
		return out
	}
	err := queryAll(ctx, sqlDB, `SELECT owner_id, outcome FROM pc_work_attempts`, func(rs *sql.Rows) error {
		var owner string
		var outcome sql.NullString
		if err := rs.Scan(&owner, &outcome); err != nil {
			return err
		}
		if owner == member {
			out[outcome.String]++
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// timeline renders per-5-second counts of created and succeeded items per kind (E2E_DEBUG=1).
func timeline(ctx context.Context, t *testing.T, sqlDB *sql.DB) string {
	type bucket struct{ mc, ms, xc, xs int }
	var start time.Time
	buckets := map[int]*bucket{}
	get := func(at time.Time) *bucket {
		i := int(at.Sub(start) / (5 * time.Second))
		if buckets[i] == nil {
			buckets[i] = &bucket{}
		}
		return buckets[i]
	}
	require.NoError(t, sqlDB.QueryRowContext(ctx, `SELECT MIN(created_at) FROM pc_work_items`).Scan(&start))
	err := queryAll(ctx, sqlDB, `SELECT kind, created_at, completed_at, status FROM pc_work_items`, func(rs *sql.Rows) error {
		var kind, status string
		var created time.Time
		var completed sql.NullTime
		if err := rs.Scan(&kind, &created, &completed, &status); err != nil {
			return err
		}
		b := get(created)
		switch kind {
		case memoryKind:
			b.mc++
		case experienceKind:
			b.xc++
		}
		if completed.Valid && status == "succeeded" {
			b = get(completed.Time)
			switch kind {
			case memoryKind:
				b.ms++
			case experienceKind:
				b.xs++
			}
		}
		return nil
	})
	require.NoError(t, err)
	keys := make([]int, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var sb strings.Builder
	for _, k := range keys {
		b := buckets[k]
		fmt.Fprintf(&sb, "  +%3ds memory %3d/%3d experience %3d/%3d\n", k*5, b.mc, b.ms, b.xc, b.xs)
	}
	return sb.String()
}
