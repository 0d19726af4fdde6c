//go:build linux

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// skewEnv is read by internal/clock in a binary built with -tags clockskew.
const skewEnv = "PC_TEST_CLOCK_SKEW"

// Why not libfaketime: Go reads the wall clock through the kernel's vDSO, not through libc's clock_gettime, so
// LD_PRELOAD=libfaketime.so changes nothing in a Go program, static (as this binary is, no cgo) or dynamically
// linked (checked with faketime 0.9.10 and Go 1.26: a cgo call to clock_gettime is shifted, time.Now is not). The
// round therefore builds the binary with -tags clockskew, which makes internal/clock add the offsets of
// PC_TEST_CLOCK_SKEW to every wall-clock read of the service (a guard test keeps all of them going through it), and
// verifies from the processes' own request logs that each one really runs on its shifted clock.

// The clock-skew round: the chaos round, shorter, with the clocks of two workers, both schedulers and one API
// shifted by about an hour either way or a few minutes, and two of them stepped during the run. Offsets restart with
// every restart of a process (its clock is read from its start).
var (
	skewShortVariant = variant{name: "skew", mode: modeSkew, chaos: 40 * time.Second, maxChaos: 80 * time.Second, scopes: 40, loaders: 6,
		minWindows: 150, minKills: 8, freezeEvery: [2]time.Duration{2 * time.Second, 5 * time.Second}, freezeSchedulers: 0.2,
		zombieShare: 0.4, partitionShare: 0.5, zombieHold: workerLease + 3*time.Second, maxFrozenWorkers: 2,
		drainTimeout: 60 * time.Second, budget: 2 * time.Minute, skews: fleetSkews}
	skewLongVariant = variant{name: "skew", mode: modeSkew, chaos: 120 * time.Second, maxChaos: 200 * time.Second, scopes: 60, loaders: 6,
		minWindows: 500, minKills: 25, freezeEvery: [2]time.Duration{2 * time.Second, 5 * time.Second}, freezeSchedulers: 0.2,
		zombieShare: 0.4, partitionShare: 0.5, zombieHold: workerLease + 3*time.Second, maxFrozenWorkers: 2,
		drainTimeout: 90 * time.Second, budget: 4 * time.Minute, skews: fleetSkews}
	fleetSkews = map[string]string{
		"worker-0":    "+1h",
		"worker-1":    "-1h4m",
		"worker-2":    "+0s,+3m@4s,-58m@9s", // steps forward a few minutes, then back an hour
		"scheduler-0": "+1h3m",
		"scheduler-1": "+0s,-1h@4s,+2m@9s", // steps back an hour, then forward again
		"api-1":       "-7m",
	}
)

// TestFleetClockSkew runs the chaos round with skewed and stepping process clocks (see fleetSkews). The protocol
// decides on database time only, so the same SQL checks must pass: a worker an hour ahead expires no live lease and
// commits nothing twice, a scheduler an hour behind does not keep a lease it lost.
func TestFleetClockSkew(t *testing.T) {
	fleetTest(t, skewShortVariant, skewLongVariant, []string{"clockskew"}, func(t *testing.T, res roundResult, v variant) {
		sk := res.skew
		for _, c := range sk.causes() {
			res.verdict.cause("%s", c)
		}
		res.requireClean(t, v)
		require.GreaterOrEqual(t, res.report.Kills, v.minKills, "SIGKILLs")
		require.Zero(t, sk.mismatches, "processes whose logged time does not match their configured skew:%s", joinDetails(sk.details))
		require.Empty(t, sk.unprobed, "skewed processes never probed")
		require.Empty(t, sk.unseenSteps, "clock steps never observed")
	})
}

// clockProbe is one GET /health/live sent to a process with a known request id; its request log line carries the
// process's own time.
type clockProbe struct {
	proc       string
	id         string
	sent, recv time.Time
}

// probeClocks sends a probe to every process every second (unskewed ones are the control) until stop is called.
func (r *round) probeClocks() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 2 * time.Second}
	for _, p := range r.fl.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				id := fmt.Sprintf("clockprobe-%s-%d", p.name(), n)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.baseURL()+"/health/live", nil)
				req.Header.Set("X-Request-Id", id)
				sent := time.Now()
				if resp, err := client.Do(req); err == nil {
					resp.Body.Close()
					r.mu.Lock()
					r.probes = append(r.probes, clockProbe{proc: p.name(), id: id, sent: sent, recv: time.Now()})
					r.mu.Unlock()
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}

// awaitClockSteps keeps the probes running after the chaos until every configured clock step was seen, at most
// max. A process's offsets restart with each of its restarts, so one the chaos killed shortly before the end may not
// yet have lived to its later steps; with the kills over it does within seconds (the last step is at 9 s).
func (r *round) awaitClockSteps(max time.Duration) {
	deadline := time.Now().Add(max)
	for len(r.skewFindings().unseenSteps) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Second)
	}
}

// skewResult compares the time each process logged for its probes with the harness's clock.
type skewResult struct {
	probes      int
	observed    map[string][]time.Duration // process → distinct observed offsets (rounded)
	mismatches  int
	unprobed    []string
	unseenSteps []string
	details     []string
}

// skewFindings reads the request log lines of the probes from every process log.
func (r *round) skewFindings() *skewResult {
	r.mu.Lock()
	probes := map[string]clockProbe{}
	for _, p := range r.probes {
		probes[p.id] = p
	}
	r.mu.Unlock()
	res := &skewResult{observed: map[string][]time.Duration{}}
	seenSteps := map[string]map[time.Duration]bool{}
	for _, path := range r.fl.logFiles() {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !strings.Contains(string(line), "clockprobe-") {
				continue
			}
			var l struct {
				Time      time.Time `json:"time"`
				RequestID string    `json:"request_id"`
			}
			if json.Unmarshal(line, &l) != nil {
				continue
			}
			p, ok := probes[l.RequestID]
			if !ok {
				continue
			}
			res.probes++
			// The line was written between sent and recv on the harness's clock.
			mid := p.sent.Add(p.recv.Sub(p.sent) / 2)
			off := l.Time.Sub(mid)
			tol := p.recv.Sub(p.sent)/2 + 250*time.Millisecond
			steps := skewSteps(r.v.skews[p.proc])
			match := false
			for _, s := range steps {
				if time.Duration(math.Abs(float64(off-s))) <= tol {
					match = true
					if seenSteps[p.proc] == nil {
						seenSteps[p.proc] = map[time.Duration]bool{}
					}
					seenSteps[p.proc][s] = true
				}
			}
			rounded := off.Round(10 * time.Second)
			if obs := res.observed[p.proc]; len(obs) == 0 || !containsDuration(obs, rounded) {
				res.observed[p.proc] = append(obs, rounded)
			}
			if !match {
				res.mismatches++
				if len(res.details) < 10 {
					res.details = append(res.details, fmt.Sprintf("%s logged %s for probe %s: %s off the harness clock, configured %q",
						p.proc, l.Time.Format(time.RFC3339Nano), p.id, off.Round(time.Millisecond), r.v.skews[p.proc]))
				}
			}
		}
		_ = f.Close()
	}
	for _, p := range r.fl.procs {
		name := p.name()
		if len(res.observed[name]) == 0 {
			res.unprobed = append(res.unprobed, name)
			continue
		}
		for _, s := range skewSteps(r.v.skews[name]) {
			if !seenSteps[name][s] {
				res.unseenSteps = append(res.unseenSteps, fmt.Sprintf("%s %s", name, s))
			}
		}
	}
	sort.Strings(res.unprobed)
	sort.Strings(res.unseenSteps)
	return res
}

// skewSteps returns the offsets of a PC_TEST_CLOCK_SKEW value ([0] when empty).
func skewSteps(v string) []time.Duration {
	out := []time.Duration{}
	for _, part := range strings.Split(v, ",") {
		off, _, _ := strings.Cut(strings.TrimSpace(part), "@")
		if d, err := time.ParseDuration(off); err == nil {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		out = append(out, 0)
	}
	return out
}

func containsDuration(ds []time.Duration, d time.Duration) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

func (s *skewResult) causes() []string {
	var out []string
	if s.mismatches > 0 {
		out = append(out, fmt.Sprintf("harness: %d clock probes did not match the configured skew (%s)", s.mismatches, firstDetail(s.details, "")))
	}
	if len(s.unprobed) > 0 {
		out = append(out, fmt.Sprintf("harness: processes never answered a clock probe: %v", s.unprobed))
	}
	if len(s.unseenSteps) > 0 {
		out = append(out, fmt.Sprintf("harness: clock steps never observed: %v", s.unseenSteps))
	}
	return out
}

func (s *skewResult) line() string {
	return fmt.Sprintf("clock_probes=%d skew_mismatches=%d", s.probes, s.mismatches)
}

func (s *skewResult) log(t *testing.T, round, engine string) {
	names := make([]string, 0, len(s.observed))
	for n := range s.observed {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s=%v", n, s.observed[n]))
	}
	t.Logf("%s %s: process clocks observed (offset from the harness clock, per process): %s", round, engine, strings.Join(parts, " "))
	if len(s.details) > 0 {
		t.Logf("%s %s clock findings:%s", round, engine, joinDetails(s.details))
	}
}
