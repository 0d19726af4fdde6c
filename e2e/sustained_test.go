//go:build linux

package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// The sustained load (`make load`, and a short variant in `make test`): an open-loop generator sends captures,
// flushes, reads and searches at a fixed arrival rate through both API replicas of a fleet (2 api, 2 scheduler,
// 3 worker) on a private PostgreSQL and a private MariaDB server, whatever the answers' latency (a request is sent
// at its arrival time, not when the previous one returned; requests beyond maxInflight are counted as dropped by the
// generator, never queued). It reports throughput, latency percentiles per route, answers by status, the ledger's
// queue depth over time and the server's client connections, and requires no 5xx, no transport error and no lost
// Source (every acknowledged capture is in the journal), plus the fleet round's SQL checks after the drain.
//
// Settings (environment): LOAD=1 selects the full run (else the short one); LOAD_DURATION (default 3m full, 20s
// short), LOAD_RATE requests per second (default 40 full, 20 short), LOAD_ENGINES (default mysql,postgres). The
// full run also runs a second load per engine (LOAD_RESTART_DURATION, default 2m) that restarts the whole worker
// fleet (SIGTERM, then start) in the middle.

type loadSettings struct {
	duration, restartDuration time.Duration
	rate                      float64
	scopes                    int
	engines                   []db.Engine
	full                      bool
}

func loadConfig(t *testing.T) loadSettings {
	s := loadSettings{duration: 20 * time.Second, rate: 20, scopes: 30, engines: fleetEngines}
	if os.Getenv("LOAD") == "1" {
		s.full, s.duration, s.restartDuration, s.rate, s.scopes = true, 3*time.Minute, 2*time.Minute, 40, 100
	}
	var err error
	if v := os.Getenv("LOAD_DURATION"); v != "" {
		s.duration, err = time.ParseDuration(v)
		require.NoError(t, err, "LOAD_DURATION")
	}
	if v := os.Getenv("LOAD_RESTART_DURATION"); v != "" {
		s.restartDuration, err = time.ParseDuration(v)
		require.NoError(t, err, "LOAD_RESTART_DURATION")
	}
	if v := os.Getenv("LOAD_RATE"); v != "" {
		s.rate, err = strconv.ParseFloat(v, 64)
		require.NoError(t, err, "LOAD_RATE")
		require.Positive(t, s.rate, "LOAD_RATE")
	}
	if v := os.Getenv("LOAD_ENGINES"); v != "" {
		s.engines = nil
		for _, e := range strings.Split(v, ",") {
			s.engines = append(s.engines, db.Engine(strings.TrimSpace(e)))
		}
	}
	return s
}

// TestLoad is the sustained load; see the comment above for its settings.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e load: skipped with -short")
	}
	cfg := loadConfig(t)
	bin := buildBinary(t, t.TempDir(), "powercontext")
	var tables []string
	for _, engine := range cfg.engines {
		runs := []struct {
			name    string
			dur     time.Duration
			restart bool
		}{{"steady", cfg.duration, false}}
		if cfg.full && cfg.restartDuration > 0 {
			runs = append(runs, struct {
				name    string
				dur     time.Duration
				restart bool
			}{"worker-restart", cfg.restartDuration, true})
		}
		for _, run := range runs {
			t.Run(string(engine)+"/"+run.name, func(t *testing.T) {
				res := runLoad(t, engine, bin, cfg, run.name, run.dur, run.restart)
				tables = append(tables, res.table)
				res.require(t)
			})
		}
	}
	if len(tables) > 0 {
		fmt.Printf("\n%s", strings.Join(tables, "\n"))
	}
}

// loadRoute is one kind of request of the mix.
type loadRoute struct {
	name   string
	weight int
}

var loadMix = []loadRoute{
	{"POST /v1/sources", 55},
	{"POST /v1/memory/flush (async)", 8},
	{"POST /v1/memory/flush (wait)", 2},
	{"GET /v1/memory", 12},
	{"GET /v1/memory/search", 10},
	{"GET /v1/sources", 8},
	{"GET /v1/operations", 5},
}

type routeStats struct {
	lat      []time.Duration
	statuses map[string]int
}

// loadRun is one open-loop run's state.
type loadRun struct {
	apis        []*proc
	scopes      []string
	client      *http.Client
	maxInflight int64

	inflight, dropped, sent atomic.Int64
	maxLag                  atomic.Int64 // the generator's worst lateness against the arrival schedule (ns)

	mu     sync.Mutex
	stats  map[string]*routeStats
	next   map[string]int
	acked  map[string]map[string]bool
	tried  map[string]map[string]bool
	errors []string
	hist   *history // captures and 200 flush answers, checked with porcupine after the drain (history_test.go)
}

func (l *loadRun) record(route string, lat time.Duration, status string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.stats[route]
	if st == nil {
		st = &routeStats{statuses: map[string]int{}}
		l.stats[route] = st
	}
	st.lat = append(st.lat, lat)
	st.statuses[status]++
}

// generate sends requests at rate per second for dur, on schedule: request i is due at start + i/rate.
func (l *loadRun) generate(ctx context.Context, rate float64, dur time.Duration) {
	var wg sync.WaitGroup
	total := 0
	for _, m := range loadMix {
		total += m.weight
	}
	start := time.Now()
	for i := 0; ; i++ {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if due.Sub(start) >= dur || ctx.Err() != nil {
			break
		}
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		} else if lag := int64(-wait); lag > l.maxLag.Load() {
			l.maxLag.Store(lag)
		}
		if l.inflight.Load() >= l.maxInflight {
			l.dropped.Add(1)
			continue
		}
		pick := rand.IntN(total)
		route := loadMix[0]
		for _, m := range loadMix {
			if pick < m.weight {
				route = m
				break
			}
			pick -= m.weight
		}
		api := l.apis[i%len(l.apis)]
		l.inflight.Add(1)
		l.sent.Add(1)
		wg.Add(1)
		client := i % clientMemoryCommits // the history's client id: only for porcupine's visualisation
		go func() {
			defer wg.Done()
			defer l.inflight.Add(-1)
			l.do(ctx, api, route.name, client)
		}()
	}
	wg.Wait()
}

// do sends one request of route to api and records its answer (captures and 200 flushes also in the history).
func (l *loadRun) do(ctx context.Context, api *proc, route string, client int) {
	scope := l.scopes[rand.IntN(len(l.scopes))]
	q := url.Values{"scope_id": {scope}}
	var method, path string
	var body []byte
	header := http.Header{}
	var sourceID string
	switch route {
	case "POST /v1/sources":
		l.mu.Lock()
		l.next[scope]++
		n := l.next[scope]
		sourceID = fmt.Sprintf("load-%07d", n)
		if l.tried[scope] == nil {
			l.tried[scope], l.acked[scope] = map[string]bool{}, map[string]bool{}
		}
		l.tried[scope][sourceID] = true
		l.mu.Unlock()
		method, path = http.MethodPost, "/v1/sources"
		body, _ = json.Marshal(map[string]any{"scope_id": scope, "source_id": sourceID, "source_type": "message",
			"content":  fmt.Sprintf("Load source %d of %s: the deploy of step %d went through after a retry.", n, scope, n),
			"metadata": map[string]any{"kind": "task-outcome", "n": n}})
	case "POST /v1/memory/flush (async)", "POST /v1/memory/flush (wait)":
		method, path = http.MethodPost, "/v1/memory/flush"
		body, _ = json.Marshal(map[string]string{"scope_id": scope})
		if strings.HasSuffix(route, "(wait)") {
			header.Set("Prefer", "wait=2")
		} else {
			header.Set("Prefer", "respond-async")
		}
	case "GET /v1/memory":
		method, path = http.MethodGet, "/v1/memory?"+q.Encode()
	case "GET /v1/memory/search":
		q.Set("q", "fact project")
		q.Set("limit", "10")
		method, path = http.MethodGet, "/v1/memory/search?"+q.Encode()
	case "GET /v1/sources":
		q.Set("limit", "20")
		method, path = http.MethodGet, "/v1/sources?"+q.Encode()
	case "GET /v1/operations":
		q.Set("limit", "10")
		method, path = http.MethodGet, "/v1/operations?"+q.Encode()
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), method, api.baseURL()+path, bytes.NewReader(body))
	if err != nil {
		l.record(route, 0, "request-error")
		return
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	start := time.Now()
	resp, err := l.client.Do(req)
	if err != nil {
		if sourceID != "" {
			// No answer: the capture may still have landed; the database fills its position in.
			l.hist.add(histOp{Kind: hCapture, Scope: scope, Client: client, Call: start, Return: time.Now(), Note: sourceID})
		}
		l.record(route, time.Since(start), "transport-error")
		l.mu.Lock()
		if len(l.errors) < 10 {
			l.errors = append(l.errors, fmt.Sprintf("%s on %s: %v", route, api.name(), err))
		}
		l.mu.Unlock()
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lat := time.Since(start)
	status := strconv.Itoa(resp.StatusCode)
	if resp.StatusCode >= 400 {
		status += " " + errorCode(b)
	}
	if resp.StatusCode >= 500 {
		l.mu.Lock()
		if len(l.errors) < 10 {
			l.errors = append(l.errors, fmt.Sprintf("%s on %s: %d %s", route, api.name(), resp.StatusCode, bytesHead(b)))
		}
		l.mu.Unlock()
	}
	l.record(route, lat, status)
	ret := start.Add(lat)
	switch {
	case sourceID != "":
		op := histOp{Kind: hCapture, Scope: scope, Client: client, Call: start, Return: ret, Note: sourceID}
		if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK {
			var a struct {
				Position int64 `json:"journal_position"`
			}
			_ = json.Unmarshal(b, &a)
			op.Pos = a.Position
			l.mu.Lock()
			l.acked[scope][sourceID] = true
			l.mu.Unlock()
		}
		l.hist.add(op) // Pos 0: no position answered; the database fills it in when the capture landed
	case path == "/v1/memory/flush" && resp.StatusCode == http.StatusOK:
		var a flushAnswer
		if json.Unmarshal(b, &a) != nil {
			return
		}
		op := histOp{Scope: scope, Client: client, Call: start, Return: ret, Note: a.OperationID}
		switch a.Status {
		case "idle":
			op.Kind = hFlushIdle
			l.hist.add(op)
		case "processed":
			op.Kind, op.Prev, op.Cur, op.HW = hFlushProcessed, a.PreviousCursor, a.CurrentCursor, a.HighWatermark
			if a.Memory != nil {
				op.Rev = a.Memory.Revision
			}
			l.hist.add(op)
		}
	}
}

// depthSample is one reading of the ledger queue and the server's connections.
type depthSample struct {
	at                         time.Duration
	queued, running, retryWait int
	conns                      int
}

// loadResult is what one run measured and found.
type loadResult struct {
	table                  string
	server5xx, transport   int
	lostSources            int
	lostDetails            []string
	errors                 []string
	round                  roundResult
	restartErr             error
	restartTook            time.Duration
	dropped                int64
	requiredVariantWindows int
}

func (res loadResult) require(t *testing.T) {
	vd := res.round.verdict
	if res.server5xx > 0 {
		vd.cause("service: %d API 5xx under load (%s)", res.server5xx, firstDetail(res.errors, ""))
	}
	if res.transport > 0 {
		vd.cause("service: %d transport errors under load (%s)", res.transport, firstDetail(res.errors, ""))
	}
	if res.lostSources > 0 {
		vd.cause("protocol: lost_sources=%d (%s)", res.lostSources, firstDetail(res.lostDetails, ""))
	}
	if res.dropped > 0 {
		vd.cause("harness: the generator dropped %d arrivals at its in-flight cap (the fleet could not keep up with the rate)", res.dropped)
	}
	res.round.requireClean(t, variant{minWindows: res.requiredVariantWindows})
	require.Zero(t, res.server5xx, "API 5xx under load:%s", joinDetails(res.errors))
	require.Zero(t, res.transport, "transport errors under load:%s", joinDetails(res.errors))
	require.Zero(t, res.lostSources, "acknowledged Sources missing from the journal:%s", joinDetails(res.lostDetails))
	require.NoError(t, res.restartErr, "worker fleet restart")
	require.Zero(t, res.dropped, "arrivals dropped at the generator's in-flight cap")
}

// runLoad runs one open-loop load against a fresh fleet on a private server of engine.
func runLoad(t *testing.T, engine db.Engine, bin string, cfg loadSettings, name string, dur time.Duration, restart bool) loadResult {
	started := time.Now()
	v := variant{name: "load-" + name, mode: modeDatabase, drainTimeout: 90 * time.Second}
	r := &round{t: t, engine: engine, v: v, armed: map[int]chan struct{}{}, killsByRole: map[string]int{}, budget: newBudget(t)}
	r.setPhase("setup")
	vd := newVerdict(t, v.name, string(engine), r.getPhase)
	u := r.setup(bin, true, 200*time.Millisecond, 0.02)
	t.Logf("%s: fleet up in %s", engine, time.Since(started).Round(time.Millisecond))

	scopes := make([]string, cfg.scopes)
	for i := range scopes {
		scopes[i] = fmt.Sprintf("load/scope-%03d", i)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0, IdleConnTimeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	l := &loadRun{apis: r.apis, scopes: scopes, client: &http.Client{Timeout: 30 * time.Second, Transport: tr},
		maxInflight: 512, stats: map[string]*routeStats{}, next: map[string]int{}, acked: map[string]map[string]bool{},
		tried: map[string]map[string]bool{}, hist: &history{}}

	// The scheduler lease, sampled as in the fleet rounds; queue depth and connections every 2 s.
	stopSampling := r.startSampler(u)
	monDB := enginetest.OpenSQLDB(t, u)
	monDB.SetMaxOpenConns(1)
	var depth []depthSample
	var depthMu sync.Mutex
	loadStart := time.Now()
	monCtx, stopMon := context.WithCancel(context.Background())
	monDone := make(chan struct{})
	go func() {
		defer close(monDone)
		for monCtx.Err() == nil {
			s := depthSample{at: time.Since(loadStart)}
			ctx, cancel := context.WithTimeout(monCtx, 2*time.Second)
			_ = queryAll(ctx, monDB, `SELECT status, COUNT(*) FROM pc_work_items WHERE status IN ('queued', 'running', 'retry_wait') GROUP BY status`,
				func(rs *sql.Rows) error {
					var st string
					var n int
					if err := rs.Scan(&st, &n); err != nil {
						return err
					}
					switch st {
					case "queued":
						s.queued = n
					case "running":
						s.running = n
					case "retry_wait":
						s.retryWait = n
					}
					return nil
				})
			s.conns, _ = r.srv.connections(ctx, monDB)
			cancel()
			depthMu.Lock()
			depth = append(depth, s)
			depthMu.Unlock()
			select {
			case <-monCtx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()

	res := loadResult{requiredVariantWindows: 10}
	r.setPhase("load")
	genCtx, stopGen := context.WithCancel(context.Background())
	defer stopGen()
	genDone := make(chan struct{})
	go func() {
		defer close(genDone)
		l.generate(genCtx, cfg.rate, dur)
	}()
	if restart {
		time.Sleep(dur / 2)
		res.restartTook, res.restartErr = r.restartWorkers()
		t.Logf("%s: worker fleet restarted (SIGTERM, then start) in %s (%v)", engine, res.restartTook.Round(time.Millisecond), res.restartErr)
	}
	<-genDone
	loadTook := time.Since(loadStart)

	r.setPhase("drain")
	drainTook, drainCut := r.waitDrained()
	r.checkAlive()
	stopMon()
	<-monDone
	stopSampling()

	r.setPhase("checks")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l.mu.Lock()
	acked, tried := map[string]int{}, map[string]int{}
	for s, ids := range l.acked {
		acked[s] = len(ids)
	}
	for s, ids := range l.tried {
		tried[s] = len(ids)
	}
	ackedIDs := l.acked
	l.mu.Unlock()
	rep, err := checkInvariants(ctx, engine, r.sqlDB, workerLease, acked, tried)
	require.NoError(t, err)
	present := map[string]bool{}
	require.NoError(t, queryAll(ctx, r.sqlDB, `SELECT scope_id, source_id FROM pc_sources`, func(rs *sql.Rows) error {
		var scope, id string
		if err := rs.Scan(&scope, &id); err != nil {
			return err
		}
		present[scope+"\x00"+id] = true
		return nil
	}))
	for scope, ids := range ackedIDs {
		for id := range ids {
			if !present[scope+"\x00"+id] {
				res.lostSources++
				if len(res.lostDetails) < 10 {
					res.lostDetails = append(res.lostDetails, fmt.Sprintf("scope %s source %s acknowledged but not in the journal", scope, id))
				}
			}
		}
	}
	r.setPhase("stopping the fleet")
	r.fl.stopAll(15 * time.Second)
	panics, _ := r.fl.scanLogs()

	// The history, as in the fleet rounds: the load's captures and flush answers, completed with the database's
	// commits and final state (the fleet is stopped), checked with porcupine.
	r.setPhase("history check")
	var hv historyVerdict
	ops, unanswered, herr := completeHistory(ctx, r.sqlDB, l.hist.list(), loadStart)
	if herr != nil {
		hv.Err = herr
	} else {
		hv = checkHistory(ops, 2*time.Minute, historyDir(), "load-"+name+"-"+string(engine))
		hv.Unanswered = unanswered
	}
	t.Logf("load %s %s history: %s, checked in %s %s; %s; %d captures landed without an answer", name, engine, hv.line(),
		hv.Took.Round(time.Millisecond), hv.detail(), kinds(ops), hv.Unanswered)

	// The table.
	l.mu.Lock()
	defer l.mu.Unlock()
	var sb strings.Builder
	answered := 0
	for _, st := range l.stats {
		answered += len(st.lat)
	}
	fmt.Fprintf(&sb, "load %s %s: %s at %.0f/s open loop through %d API replicas (%d scopes; 3 workers, 2 schedulers)\n",
		engine, name, dur, cfg.rate, len(r.apis), cfg.scopes)
	fmt.Fprintf(&sb, "  sent %d, answered %d (%.1f/s over %s), dropped at the in-flight cap %d, generator lag max %s\n",
		l.sent.Load(), answered, float64(answered)/loadTook.Seconds(), loadTook.Round(time.Millisecond), l.dropped.Load(),
		time.Duration(l.maxLag.Load()).Round(time.Millisecond))
	fmt.Fprintf(&sb, "  %-31s %6s %8s %8s %8s %8s  %s\n", "route", "n", "p50", "p95", "p99", "max", "answers")
	for _, m := range loadMix {
		st := l.stats[m.name]
		if st == nil {
			continue
		}
		sort.Slice(st.lat, func(i, j int) bool { return st.lat[i] < st.lat[j] })
		pct := func(p float64) string {
			i := int(p * float64(len(st.lat)-1))
			return fmtMillis(st.lat[i])
		}
		fmt.Fprintf(&sb, "  %-31s %6d %8s %8s %8s %8s  %s\n", m.name, len(st.lat), pct(0.50), pct(0.95), pct(0.99),
			fmtMillis(st.lat[len(st.lat)-1]), sortedCounts(st.statuses))
		for status, n := range st.statuses {
			if strings.HasPrefix(status, "5") {
				res.server5xx += n
			}
			if status == "transport-error" || status == "request-error" {
				res.transport += n
			}
		}
	}
	depthMu.Lock()
	maxQ, maxConns, minConns, sumConns := 0, 0, -1, 0
	var tl []string
	for i, s := range depth {
		maxQ = max(maxQ, s.queued+s.running+s.retryWait)
		maxConns = max(maxConns, s.conns)
		if minConns < 0 || s.conns < minConns {
			minConns = s.conns
		}
		sumConns += s.conns
		if i%5 == 0 {
			tl = append(tl, fmt.Sprintf("%3.0fs q=%d r=%d w=%d c=%d", s.at.Seconds(), s.queued, s.running, s.retryWait, s.conns))
		}
	}
	avgConns := 0.0
	if len(depth) > 0 {
		avgConns = float64(sumConns) / float64(len(depth))
	}
	depthMu.Unlock()
	fmt.Fprintf(&sb, "  ledger queue (queued+running+retry_wait) max %d; database client connections (the harness's 3 included) min %d avg %.1f max %d\n",
		maxQ, minConns, avgConns, maxConns)
	fmt.Fprintf(&sb, "  over time (every 10 s; q queued, r running, w retry_wait, c connections):\n")
	for i := 0; i < len(tl); i += 4 {
		fmt.Fprintf(&sb, "    %s\n", strings.Join(tl[i:min(i+4, len(tl))], " | "))
	}
	fmt.Fprintf(&sb, "  after the load: drained in %s; windows=%d duplicates=%d lost=%d inversions=%d stuck=%d lost_sources=%d api_5xx=%d",
		drainTook.Round(time.Millisecond), rep.Windows, rep.Duplicates, rep.Lost, rep.Inversions, rep.Stuck, res.lostSources, res.server5xx)
	if restart {
		fmt.Fprintf(&sb, "; worker fleet restart at %s took %s", (dur / 2).Round(time.Second), res.restartTook.Round(time.Millisecond))
	}
	sb.WriteString("\n")
	res.table = sb.String()
	res.errors = append(res.errors, l.errors...)
	res.dropped = l.dropped.Load()
	t.Logf("\n%s", res.table)
	vd.summary(fmt.Sprintf("requests=%d rate=%.0f/s api_5xx=%d lost_sources=%d windows=%d duplicates=%d lost=%d inversions=%d stuck=%d %s",
		answered, cfg.rate, res.server5xx, res.lostSources, rep.Windows, rep.Duplicates, rep.Lost, rep.Inversions, rep.Stuck, hv.line()))
	res.round = roundResult{report: rep, lease: r.sampler.summary(), unexpected: r.unexpectedCopy(), panics: panics,
		drainCut: drainCut, harness: r.harnessCopy(), providerBad: r.prov.badRequests.Load(), verdict: vd, history: hv}
	return res
}

// restartWorkers SIGTERMs every worker at once, waits for them to exit and starts them again.
func (r *round) restartWorkers() (time.Duration, error) {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(r.workers))
	for i, p := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.fl.terminate(p, workerGrace+10*time.Second); err != nil {
				errs[i] = err
				return
			}
			errs[i] = r.fl.start(p)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return time.Since(start), err
		}
	}
	return time.Since(start), nil
}

func fmtMillis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 10:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.0fms", ms)
	}
}
