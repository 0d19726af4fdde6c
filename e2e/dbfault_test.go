//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// dbFault is one fault of the database round.
type dbFault struct {
	// kind "kill": SIGKILL the server and all its processes, restart it at once (crash recovery); "stop": shut it
	// down cleanly and keep it down for hold (longer than the worker lease, so every lease expires meanwhile).
	kind string
	hold time.Duration
}

// The database round: a fleet on its own private server that is killed and stopped during the load.
var (
	dbShortVariant = variant{name: "database", mode: modeDatabase, scopes: 40, loaders: 6, minWindows: 60,
		drainTimeout: 60 * time.Second, budget: 2 * time.Minute, warmWindows: 20, dbGap: 8 * time.Second,
		dbFaults: []dbFault{{kind: "kill"}, {kind: "stop", hold: 2 * workerLease}, {kind: "kill"}}}
	dbLongVariant = variant{name: "database", mode: modeDatabase, scopes: 60, loaders: 6, minWindows: 200,
		drainTimeout: 90 * time.Second, budget: 4 * time.Minute, warmWindows: 30, dbGap: 12 * time.Second,
		dbFaults: []dbFault{{kind: "kill"}, {kind: "stop", hold: 2 * workerLease}, {kind: "kill"}, {kind: "kill"},
			{kind: "stop", hold: 5 * workerLease}, {kind: "kill"}}}
)

// outageRequestLimit is the longest a request that overlaps an outage may take: the longest legitimate request of
// the load is a flush waiting 5 s; a request hanging on a dead connection would take the client's 15 s.
const outageRequestLimit = 10 * time.Second

// TestFleetDatabaseRestart runs the fleet on a private PostgreSQL and a private MariaDB server and, under load,
// SIGKILLs the server (and restarts it) and separately stops it for longer than the worker lease. The SQL checks
// must find nothing lost, duplicated, reordered or stuck; while the database is down every API answer is a clean
// 503 in the documented error body (never a 500, never a hang), readiness reports the database as not ok, and
// outside the outages the API answers no 5xx at all.
func TestFleetDatabaseRestart(t *testing.T) {
	fleetTest(t, dbShortVariant, dbLongVariant, nil, func(t *testing.T, res roundResult, v variant) {
		d := res.db
		for _, c := range d.causes() {
			res.verdict.cause("%s", c)
		}
		res.requireClean(t, v)
		require.Len(t, d.outages, len(v.dbFaults), "outages injected")
		require.Zero(t, d.outside5xx, "5xx outside the outages:%s", joinDetails(d.outsideDetails))
		require.Zero(t, d.bad5xx, "5xx during outages that are not a documented 503:%s", joinDetails(d.badDetails))
		require.Zero(t, d.hangs, "requests that hung during outages:%s", joinDetails(d.badDetails))
		require.Zero(t, d.readyWrong, "readiness said the database was ok while it was down:%s", joinDetails(d.readyDetails))
		require.Zero(t, d.readyBlind, "outages readiness never reported:%s", joinDetails(d.readyDetails))
		require.Zero(t, d.noCommit, "outages after which nothing was committed again")
	})
}

// apiSample is one HTTP answer (or transport error) of the load.
type apiSample struct {
	path       string
	start, end time.Time
	status     int
	body       []byte // kept for 5xx only
	err        error
}

type apiRecorder struct {
	mu   sync.Mutex
	list []apiSample
}

func newAPIRecorder() *apiRecorder { return &apiRecorder{} }

func (a *apiRecorder) add(s apiSample) {
	if a == nil {
		return
	}
	if s.status < 500 {
		s.body = nil
	}
	a.mu.Lock()
	a.list = append(a.list, s)
	a.mu.Unlock()
}

func (a *apiRecorder) samples() []apiSample {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]apiSample(nil), a.list...)
}

// documented503 tells whether body is the documented error body with code runtime_not_ready.
func documented503(body []byte) bool {
	var e struct {
		Error *struct {
			Code    *string         `json:"code"`
			Message *string         `json:"message"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil || e.Error.Code == nil || e.Error.Message == nil || e.Error.Details == nil {
		return false
	}
	return *e.Error.Code == "runtime_not_ready" && *e.Error.Message != ""
}

// readySample is one GET /health/ready answer.
type readySample struct {
	proc       string
	start, end time.Time
	status     int
	database   string // checks.database
	err        error
}

// observeReadiness polls /health/ready on every API replica, one worker and one scheduler every 250 ms until the
// returned stop is called.
func (r *round) observeReadiness() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	targets := append(append([]*proc{}, r.apis...), r.workers[0], r.schedulers[0])
	client := &http.Client{Timeout: 15 * time.Second}
	for _, p := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				s := readySample{proc: p.name(), start: time.Now()}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.baseURL()+"/health/ready", nil)
				resp, err := client.Do(req)
				if err == nil {
					var h struct {
						Checks map[string]any `json:"checks"`
					}
					_ = json.NewDecoder(resp.Body).Decode(&h)
					resp.Body.Close()
					s.status = resp.StatusCode
					s.database, _ = h.Checks["database"].(string)
				} else {
					s.err = err
				}
				s.end = time.Now()
				if ctx.Err() == nil {
					r.mu.Lock()
					r.ready = append(r.ready, s)
					r.mu.Unlock()
				}
				select {
				case <-ctx.Done():
				case <-time.After(250 * time.Millisecond):
				}
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}

// outage is one injected database fault and what the fleet did around it.
type outage struct {
	kind             string
	hold             time.Duration
	from, down, back time.Time     // fault injected; server process gone; server accepting connections again
	refused          time.Time     // the last connection attempt the server refused before it was back
	firstCommit      time.Duration // back → the first work item that succeeded after it (database time, same host)
	firstCapture     time.Duration // back → the first acknowledged capture sent after it
	requests         int           // API requests overlapping [from, back]
	clean503         int
	other            int // answers below 500 (served before the kill took effect, or validation)
	bad5xx, hangs    int
	maxLatency       time.Duration
	readyNotOK       int           // readiness answers inside the outage reporting the database not ok
	readyDetect      time.Duration // down → first readiness answer with the database not ok (any replica)
	readyBack        time.Duration // back → first readiness answer with the database ok on every API replica
	commitErr        error
}

// dbFaultResult is what the database round measured.
type dbFaultResult struct {
	outages                                  []*outage
	outside5xx, bad5xx, hangs                int
	readyWrong, readyBlind, noCommit         int
	outsideDetails, badDetails, readyDetails []string
}

// dbFaults drives the database round: warm up until warmWindows windows are committed, then for every fault wait
// dbGap, inject it, bring the server back and measure how long the fleet takes to commit again.
func (r *round) dbFaults(ld *load) *dbFaultResult {
	v := r.v
	res := &dbFaultResult{}
	r.waitWindows(v.warmWindows, 90*time.Second)
	for _, f := range v.dbFaults {
		r.steady(v.dbGap)
		o := &outage{kind: f.kind, hold: f.hold, from: time.Now()}
		switch f.kind {
		case "kill":
			r.srv.kill()
		case "stop":
			if err := r.srv.stop(); err != nil {
				r.note("database stop: %v", err)
			}
		}
		o.down = time.Now()
		if wait := time.Until(o.from.Add(f.hold)); wait > 0 {
			time.Sleep(wait)
		}
		require.NoError(r.t, r.srv.start(), "restart the private %s server", r.engine)
		o.back, o.refused = time.Now(), r.srv.refusedAt()
		o.firstCommit, o.commitErr = r.firstCommitAfter(o.back)
		r.t.Logf("%s: database %s: down for %s (gone after %s), first commit %s after it was back",
			r.engine, f.kind, o.back.Sub(o.from).Round(time.Millisecond), o.down.Sub(o.from).Round(time.Millisecond),
			o.firstCommit.Round(time.Millisecond))
		res.outages = append(res.outages, o)
	}
	r.steady(v.dbGap)
	return res
}

// steady lets the load run for d, restarting any process that died (and recording it).
func (r *round) steady(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		time.Sleep(min(time.Second, time.Until(end)))
		r.checkAlive()
	}
}

// waitWindows waits until n memory windows are committed (at most limit).
func (r *round) waitWindows(n int, limit time.Duration) {
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		var got int
		if r.sqlDB.QueryRow(`SELECT COUNT(*) FROM pc_memory_revisions`).Scan(&got) == nil && got >= n {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	r.note("warm-up: fewer than %d windows committed within %s", n, limit)
}

// firstCommitAfter polls until a work item has succeeded at or after back (database time; the server runs on this
// host, so its clock is the harness's) and returns how long after back that was.
func (r *round) firstCommitAfter(back time.Time) (time.Duration, error) {
	q := `SELECT MIN(completed_at) FROM pc_work_items WHERE status = 'succeeded' AND completed_at >= ?`
	if r.engine == "postgres" {
		q = strings.Replace(q, "?", "$1", 1)
	}
	deadline := time.Now().Add(60 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var first *time.Time
		err := r.sqlDB.QueryRowContext(ctx, q, back.UTC()).Scan(&first)
		cancel()
		if err == nil && first != nil {
			return first.Sub(back), nil
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	if lastErr == nil {
		lastErr = errors.New("no work item succeeded within 60 s")
	}
	return 0, lastErr
}

// finish classifies every API answer and readiness answer against the outages.
func (d *dbFaultResult) finish(r *round, rec *apiRecorder) {
	r.mu.Lock()
	ready := append([]readySample(nil), r.ready...)
	r.mu.Unlock()
	overlaps := func(start, end time.Time) *outage {
		for _, o := range d.outages {
			if !end.Before(o.from) && !start.After(o.back) {
				return o
			}
		}
		return nil
	}
	for _, s := range rec.samples() {
		o := overlaps(s.start, s.end)
		lat := s.end.Sub(s.start)
		if o == nil {
			if s.status >= 500 || s.err != nil {
				d.outside5xx++
				if len(d.outsideDetails) < 10 {
					d.outsideDetails = append(d.outsideDetails, fmt.Sprintf("%s at %s: status %d %s err %v", s.path,
						s.start.Format("15:04:05.000"), s.status, bytesHead(s.body), s.err))
				}
			}
			continue
		}
		o.requests++
		o.maxLatency = max(o.maxLatency, lat)
		switch {
		case s.err != nil || lat > outageRequestLimit:
			o.hangs++
			d.hangs++
			if len(d.badDetails) < 10 {
				d.badDetails = append(d.badDetails, fmt.Sprintf("%s during the %s outage: took %s, err %v", s.path, o.kind, lat.Round(time.Millisecond), s.err))
			}
		case s.status == http.StatusServiceUnavailable && documented503(s.body):
			o.clean503++
		case s.status >= 500:
			o.bad5xx++
			d.bad5xx++
			if len(d.badDetails) < 10 {
				d.badDetails = append(d.badDetails, fmt.Sprintf("%s during the %s outage: status %d %s", s.path, o.kind, s.status, bytesHead(s.body)))
			}
		default:
			o.other++
		}
	}
	for _, o := range d.outages {
		// The first acknowledged capture sent after the server was back.
		for _, s := range rec.samples() {
			if s.path == "/v1/sources" && (s.status == http.StatusCreated || s.status == http.StatusOK) && !s.start.Before(o.back) {
				if dt := s.end.Sub(o.back); o.firstCapture == 0 || dt < o.firstCapture {
					o.firstCapture = dt
				}
			}
		}
		if o.commitErr != nil {
			d.noCommit++
		}
		apis := map[string]bool{}
		for _, p := range r.apis {
			apis[p.name()] = true
		}
		backOK := map[string]time.Time{}
		for _, s := range ready {
			switch {
			case !s.start.Before(o.down.Add(200*time.Millisecond)) && !s.end.After(o.refused):
				// Asked and answered while the server was certainly gone (from its exit to the last refused
				// connection attempt of the restart).
				if s.err == nil && s.database == "ok" {
					d.readyWrong++
					if len(d.readyDetails) < 10 {
						d.readyDetails = append(d.readyDetails, fmt.Sprintf("%s answered database ok at %s during the %s outage", s.proc, s.end.Format("15:04:05.000"), o.kind))
					}
				} else if s.err == nil {
					o.readyNotOK++
					if dt := s.end.Sub(o.down); o.readyDetect == 0 || dt < o.readyDetect {
						o.readyDetect = dt
					}
				}
			case !s.start.Before(o.back) && s.database == "ok" && apis[s.proc]:
				if at, ok := backOK[s.proc]; !ok || s.end.Before(at) {
					backOK[s.proc] = s.end
				}
			}
		}
		for name := range apis {
			if at, ok := backOK[name]; ok {
				o.readyBack = max(o.readyBack, at.Sub(o.back))
			}
		}
		if o.readyNotOK == 0 && o.refused.Sub(o.down) > time.Second {
			d.readyBlind++
			d.readyDetails = append(d.readyDetails, fmt.Sprintf("no readiness answer reported the database down during the %s outage (%s)", o.kind, o.back.Sub(o.down).Round(time.Millisecond)))
		}
	}
}

func bytesHead(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// causes names every finding of the round for its verdict.
func (d *dbFaultResult) causes() []string {
	var out []string
	if d.outside5xx > 0 {
		out = append(out, fmt.Sprintf("service: %d API 5xx outside the outages (%s)", d.outside5xx, firstDetail(d.outsideDetails, "")))
	}
	if d.bad5xx > 0 {
		out = append(out, fmt.Sprintf("service: %d API 5xx during outages that are not a documented 503 (%s)", d.bad5xx, firstDetail(d.badDetails, "")))
	}
	if d.hangs > 0 {
		out = append(out, fmt.Sprintf("service: %d API requests hung past %s during outages (%s)", d.hangs, outageRequestLimit, firstDetail(d.badDetails, "")))
	}
	if d.readyWrong+d.readyBlind > 0 {
		out = append(out, fmt.Sprintf("service: readiness wrong %d times, blind to %d outages (%s)", d.readyWrong, d.readyBlind, firstDetail(d.readyDetails, "")))
	}
	if d.noCommit > 0 {
		out = append(out, fmt.Sprintf("service: after %d outages nothing was committed again within 60 s", d.noCommit))
	}
	return out
}

// line is the round's one-line summary of the outages.
func (d *dbFaultResult) line() string {
	kinds := map[string]int{}
	var commits, downs []string
	requests, clean := 0, 0
	for _, o := range d.outages {
		kinds[o.kind]++
		downs = append(downs, o.back.Sub(o.from).Round(100*time.Millisecond).String())
		commits = append(commits, o.firstCommit.Round(10*time.Millisecond).String())
		requests += o.requests
		clean += o.clean503
	}
	return fmt.Sprintf("outages=%s down=[%s] first_commit_after_back=[%s] outage_requests=%d clean_503=%d bad_5xx=%d hangs=%d outside_5xx=%d",
		sortedCounts(kinds), strings.Join(downs, " "), strings.Join(commits, " "), requests, clean, d.bad5xx, d.hangs, d.outside5xx)
}

func (d *dbFaultResult) log(t *testing.T, round, engine string) {
	for i, o := range d.outages {
		rate := 0.0
		if o.requests > 0 {
			rate = float64(o.requests-o.other) / float64(o.requests)
		}
		t.Logf("%s %s outage %d (%s%s): down %s (process gone after %s), first commit %s and first capture %s after back; "+
			"%d API requests overlapped it: %d clean 503, %d other 5xx, %d hung, %d answered < 500 (error rate %.0f%%), max latency %s; "+
			"readiness reported the database down %d times (first %s after it went), ok again on every API %s after back",
			round, engine, i+1, o.kind, holdText(o.hold), o.back.Sub(o.from).Round(time.Millisecond), o.down.Sub(o.from).Round(time.Millisecond),
			o.firstCommit.Round(time.Millisecond), o.firstCapture.Round(time.Millisecond), o.requests, o.clean503, o.bad5xx, o.hangs,
			o.other, 100*rate, o.maxLatency.Round(time.Millisecond), o.readyNotOK, o.readyDetect.Round(time.Millisecond),
			o.readyBack.Round(time.Millisecond))
	}
	all := append(append(append([]string{}, d.outsideDetails...), d.badDetails...), d.readyDetails...)
	sort.Strings(all)
	if len(all) > 0 {
		t.Logf("%s %s outage findings:%s", round, engine, joinDetails(all))
	}
}

func holdText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return ", held " + d.String()
}
