//go:build linux

package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// round is one fleet run: its processes, the fake provider, the database, and what the chaos did to them.
type round struct {
	t      *testing.T
	engine db.Engine
	v      variant
	rawURL string
	logDir string

	fl                        *fleet
	apis, schedulers, workers []*proc
	prov                      *fakeProvider
	sqlDB                     *sql.DB
	sampler                   *leaseSampler

	kills, pauses, partitions, zombies atomic.Int64
	frozen                             sync.Map // *proc → true while it is frozen or being drained

	mu          sync.Mutex
	killsByRole map[string]int
	unexpected  []string
	armed       map[int]chan struct{} // worker index → closed when the provider made it a zombie

	drainOwner string
	drainErr   error

	srv     *dbServer     // modeDatabase: the round's private database server
	ready   []readySample // modeDatabase: readiness answers
	probes  []clockProbe  // modeSkew: clock probes answered
	budget  budget
	phase   string
	harness []string // findings about the harness's own budget
}

func (r *round) setPhase(p string) {
	r.mu.Lock()
	r.phase = p
	r.mu.Unlock()
}

func (r *round) getPhase() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase
}

// note records a finding about the harness itself (a budget cut), reported as such in the round's verdict.
func (r *round) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.t.Logf("%s %s harness: %s", r.v.name, r.engine, msg)
	r.mu.Lock()
	r.harness = append(r.harness, msg)
	r.mu.Unlock()
}

func (r *round) harnessCopy() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.harness...)
}

// keepLogsOnFailure creates the log directory; it is removed after a passing round unless E2E_KEEP_LOGS=1.
func (r *round) keepLogsOnFailure() {
	dir, err := os.MkdirTemp("", fmt.Sprintf("powercontext-e2e-%s-%s-*", r.v.name, r.engine))
	require.NoError(r.t, err)
	r.logDir = dir
	r.t.Cleanup(func() {
		if r.t.Failed() || os.Getenv("E2E_KEEP_LOGS") == "1" {
			var files []string
			if r.fl != nil {
				files = r.fl.logFiles()
			}
			r.t.Logf("process logs kept in %s:\n  %s", dir, strings.Join(files, "\n  "))
			return
		}
		_ = os.RemoveAll(dir)
	})
}

// startFleet starts 2 api, 2 scheduler and 3 worker processes in distributed mode with short timings. Workers and
// schedulers reach the database through their own relay (so one can be partitioned), and each worker calls the
// provider on its own path (so the provider knows which worker asks).
func (r *round) startFleet(bin string) {
	t := r.t
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
	r.fl = newFleet(t, bin, r.logDir, map[string]string{
		"POWERCONTEXT_DATABASE_URL":                         r.rawURL,
		"POWERCONTEXT_DEPLOYMENT_MODE":                      "distributed",
		"POWERCONTEXT_PROVIDER_KIND":                        "openai",
		"POWERCONTEXT_PROVIDER_BASE_URL":                    r.prov.baseURL(),
		"POWERCONTEXT_PROVIDER_MODEL":                       r.prov.model,
		"POWERCONTEXT_PROVIDER_API_KEY":                     r.prov.apiKey,
		"POWERCONTEXT_PROVIDER_TIMEOUT_SECONDS":             "10",
		"POWERCONTEXT_WORKER_CONCURRENCY":                   "4",
		"POWERCONTEXT_WORKER_LEASE_SECONDS":                 secs(workerLease),
		"POWERCONTEXT_WORKER_HEARTBEAT_SECONDS":             "1",
		"POWERCONTEXT_WORKER_POLL_SECONDS":                  "0.5",
		"POWERCONTEXT_WORKER_SHUTDOWN_GRACE_SECONDS":        secs(workerGrace),
		"POWERCONTEXT_WORKER_MAX_ATTEMPTS":                  strconv.Itoa(workerMaxAttempt),
		"POWERCONTEXT_WORKER_RETRY_BASE_SECONDS":            "0.2",
		"POWERCONTEXT_WORKER_RETRY_MAX_SECONDS":             "2",
		"POWERCONTEXT_COORDINATION_SCHEDULER_LEASE_SECONDS": secs(schedulerLease),
		"POWERCONTEXT_COORDINATION_SCHEDULER_RENEW_SECONDS": "1",
		"POWERCONTEXT_RUNTIME_SCHEDULE_SECONDS":             "1",
		"POWERCONTEXT_RUNTIME_EXPERIENCE_SCHEDULE_SECONDS":  "1",
		"POWERCONTEXT_MEMBER_HEARTBEAT_SECONDS":             "1",
		"POWERCONTEXT_MEMBER_TTL_SECONDS":                   "5",
		"POWERCONTEXT_LOG_FORMAT":                           "json",
		"POWERCONTEXT_LOG_LEVEL":                            "info",
	})
	r.apis = r.fl.add("api", 2)
	r.schedulers = r.fl.add("scheduler", 2)
	r.workers = r.fl.add("worker", 3)
	parsed, err := url.Parse(r.rawURL)
	require.NoError(t, err)
	if r.srv == nil { // a private server is restarted by the harness itself; no relay in between
		for _, p := range append(append([]*proc{}, r.schedulers...), r.workers...) {
			p.proxy = newDBProxy(t, parsed.Host)
			p.env = append(p.env, "POWERCONTEXT_DATABASE_URL="+p.proxy.rewrite(t, r.rawURL))
		}
	}
	for _, p := range r.fl.procs {
		if skew := r.v.skews[p.name()]; skew != "" {
			p.env = append(p.env, skewEnv+"="+skew)
		}
	}
	for i, p := range r.workers {
		p.env = append(p.env, "POWERCONTEXT_PROVIDER_BASE_URL="+r.prov.workerBaseURL(i))
	}
	r.prov.zombie = r.makeZombie
	for _, p := range r.fl.procs {
		require.NoError(t, r.fl.start(p))
	}
}

// makeZombie is the provider hook: when worker i was armed and asks for the armed schema, its database relay stalls
// for longer than its lease right as the answer leaves. Its prepare finishes, its commit hangs in the relay, another
// worker expires and re-runs the window, and the commit arrives after the heal with a stale claim.
func (r *round) makeZombie(worker int, schema string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch, ok := r.armed[worker]
	if !ok || (r.v.zombieSchema != "" && schema != r.v.zombieSchema) {
		return false
	}
	delete(r.armed, worker)
	r.workers[worker].proxy.partition(r.v.zombieHold)
	close(ch)
	return true
}

func (r *round) pick(ps []*proc) *proc { return ps[rand.IntN(len(ps))] }

// leader returns the scheduler process holding the work-discovery lease (a random one when unknown).
func (r *round) leader() *proc {
	if pid := pidOfMember(r.sampler.leaderOwner()); pid != 0 {
		for _, p := range r.schedulers {
			if p.pid() == pid {
				return p
			}
		}
	}
	return r.pick(r.schedulers)
}

func (r *round) restart(p *proc) {
	if err := r.fl.start(p); err != nil {
		r.mu.Lock()
		r.unexpected = append(r.unexpected, "restart: "+err.Error())
		r.mu.Unlock()
	}
}

// checkAlive records and restarts any process that exited although the harness did not stop it.
func (r *round) checkAlive() {
	for _, p := range r.fl.procs {
		if gone, why := p.unexpectedExit(); gone {
			r.mu.Lock()
			r.unexpected = append(r.unexpected, why)
			r.mu.Unlock()
			r.restart(p)
		}
	}
}

func (r *round) unexpectedCopy() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.unexpected...)
}

func (r *round) killsByRoleCopy() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.killsByRole))
	for k, v := range r.killsByRole {
		out[k] = v
	}
	return out
}

// chaos SIGKILLs and restarts a random worker or scheduler (the leader more often than not, an API now and then)
// every 1–3 s, freezes processes in the background (freezer), and SIGTERM-drains one busy worker midway. It lasts
// v.chaos, and longer (up to v.maxChaos) while too few windows were committed or processes killed, so a slow
// machine still reaches the variant's minimums.
func (r *round) chaos() {
	v := r.v
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.freezer(ctx, &wg)
	}()
	start := time.Now()
	drained := false
	windows, lastProgress := 0, time.Now()
	for {
		time.Sleep(time.Second + rand.N(2*time.Second))
		var n int
		if r.sqlDB.QueryRow(`SELECT COUNT(*) FROM pc_memory_revisions`).Scan(&n) == nil && n > windows {
			windows, lastProgress = n, time.Now()
		}
		enough := int(r.kills.Load()) >= v.minKills && windows >= v.minWindows
		el := time.Since(start)
		if el >= v.chaos && enough {
			break
		}
		// Past maxChaos the round goes on only while windows are still being committed (a slow machine gets there
		// later), up to three times maxChaos and within the test binary's time budget.
		if el >= v.maxChaos {
			if stalled := time.Since(lastProgress); stalled > 30*time.Second {
				r.t.Logf("%s: no memory window committed for %s; chaos stops at %d windows", r.engine, stalled.Round(time.Second), windows)
				break
			}
			if el >= 3*v.maxChaos || r.budget.exhausted() {
				r.note("chaos stopped after %s at the time budget with %d of %d windows and %d of %d kills (still progressing)",
					el.Round(time.Second), windows, v.minWindows, r.kills.Load(), v.minKills)
				break
			}
		}
		r.checkAlive()
		if !drained && time.Since(start) > v.chaos/2 {
			drained = r.drainWorker()
			continue
		}
		var p *proc
		switch x := rand.Float64(); {
		case x < 0.08:
			p = r.pick(r.apis)
		case x < 0.58:
			p = r.pick(r.workers)
		case x < 0.80:
			p = r.leader()
		default:
			p = r.pick(r.schedulers)
		}
		r.fl.kill(p)
		r.kills.Add(1)
		r.mu.Lock()
		r.killsByRole[p.role]++
		r.mu.Unlock()
		r.restart(p)
	}
	stop()
	wg.Wait()
	r.checkAlive()
	r.t.Logf("%s: chaos over after %s: %d kills, %d pauses, %d partitions, %d zombies", r.engine,
		time.Since(start).Round(time.Millisecond), r.kills.Load(), r.pauses.Load(), r.partitions.Load(), r.zombies.Load())
}

// freezer freezes a worker or the scheduler leader past its lease every v.freezeEvery: as a process (SIGSTOP, then
// SIGCONT), on the network (its database relay stalls, then heals), or as a zombie (the relay stalls the moment the
// provider answers it). Another replica takes over; whatever the frozen one does after it resumes (heartbeat,
// commit, enqueue) must be refused by the fences.
func (r *round) freezer(ctx context.Context, wg *sync.WaitGroup) {
	v := r.v
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(v.freezeEvery[0] + rand.N(v.freezeEvery[1]-v.freezeEvery[0])):
		}
		wi := rand.IntN(len(r.workers))
		p, hold := r.workers[wi], workerLease
		scheduler := rand.Float64() < v.freezeSchedulers
		if scheduler {
			p, hold = r.leader(), schedulerLease
		} else if r.frozenWorkers() >= v.maxFrozenWorkers {
			continue
		}
		if _, busy := r.frozen.LoadOrStore(p, true); busy {
			continue
		}
		hold += time.Second + rand.N(3*time.Second)
		kind := "pause"
		switch x := rand.Float64(); {
		case !scheduler && x < v.zombieShare:
			kind = "zombie"
		case x < v.zombieShare+(1-v.zombieShare)*v.partitionShare:
			kind = "partition"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.frozen.Delete(p)
			switch kind {
			case "zombie":
				r.zombie(ctx, wi)
			case "partition":
				r.partitions.Add(1)
				p.proxy.partition(hold)
				select {
				case <-ctx.Done():
					p.proxy.heal()
				case <-time.After(hold):
				}
			default:
				if r.fl.pause(ctx, p, hold) {
					r.pauses.Add(1)
				}
			}
		}()
	}
}

func (r *round) frozenWorkers() int {
	n := 0
	r.frozen.Range(func(k, _ any) bool {
		if k.(*proc).role == "worker" {
			n++
		}
		return true
	})
	return n
}

// zombie arms worker wi for makeZombie and waits until the zombie's partition healed (or 5 s without a request).
func (r *round) zombie(ctx context.Context, wi int) {
	ch := make(chan struct{})
	r.mu.Lock()
	r.armed[wi] = ch
	r.mu.Unlock()
	select {
	case <-ch:
		r.zombies.Add(1)
		select {
		case <-ctx.Done():
			r.workers[wi].proxy.heal()
		case <-time.After(r.v.zombieHold):
		}
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
	}
	r.mu.Lock()
	if r.armed[wi] == ch {
		delete(r.armed, wi)
	}
	r.mu.Unlock()
}

// drainWorker SIGTERMs the worker holding the most running items (not a frozen one), checks that it exits with
// status 0 within its shutdown grace plus slack, and restarts it. It reports false when it should be tried again.
func (r *round) drainWorker() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	running := map[string]int{}
	err := queryAll(ctx, r.sqlDB, `SELECT lease_owner FROM pc_work_items WHERE status = 'running'`, func(rs *sql.Rows) error {
		var owner sql.NullString
		if err := rs.Scan(&owner); err != nil {
			return err
		}
		running[owner.String]++
		return nil
	})
	if err != nil {
		r.drainErr = err
		return true
	}
	var target *proc
	owner, best := "", -1
	for member, n := range running {
		for _, p := range r.workers {
			if _, busy := r.frozen.Load(p); !busy && p.pid() != 0 && pidOfMember(member) == p.pid() && n > best {
				target, owner, best = p, member, n
			}
		}
	}
	if target == nil {
		return false // no unfrozen worker holds running work now: try at the next chaos step
	}
	if _, busy := r.frozen.LoadOrStore(target, true); busy {
		return false
	}
	defer r.frozen.Delete(target)
	took, err := r.fl.terminate(target, workerGrace+10*time.Second)
	r.t.Logf("SIGTERM drain of %s (%s) with %d running items: exited after %s (%v)", target.name(), owner, best,
		took.Round(time.Millisecond), err)
	if err != nil {
		r.drainErr = fmt.Errorf("worker %s: %w (log %s)", target.name(), err, target.logPath)
	}
	if err := r.fl.start(target); err != nil && r.drainErr == nil {
		r.drainErr = err
	}
	r.drainOwner = owner
	return true
}

// waitDrained waits until every scope's cursors are at its journal head and no item is live. It gives up after
// v.drainTimeout when nothing moved for the last 30 s (the checks then report what is stuck); while the backlog
// still shrinks it waits longer, up to three times v.drainTimeout or the test binary's budget (cut = true: what is
// left is the harness's budget, not a protocol failure).
func (r *round) waitDrained() (took time.Duration, cut bool) {
	start := time.Now()
	best, lastProgress := -1, time.Now()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		lagging, live, err := drained(ctx, r.sqlDB)
		cancel()
		require.NoError(r.t, err)
		if lagging == 0 && live == 0 {
			return time.Since(start), false
		}
		if left := lagging + live; best < 0 || left < best {
			best, lastProgress = left, time.Now()
		}
		el := time.Since(start)
		if el > r.v.drainTimeout {
			if time.Since(lastProgress) > 30*time.Second {
				r.t.Logf("%s: not drained after %s and nothing moved for 30 s: %d scopes lag, %d items live", r.engine,
					el.Round(time.Second), lagging, live)
				return el, false
			}
			if el > 3*r.v.drainTimeout || r.budget.exhausted() {
				r.note("drain stopped after %s at the time budget with %d scopes lagging and %d items live (still progressing)",
					el.Round(time.Second), lagging, live)
				return el, true
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
}
