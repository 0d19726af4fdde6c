package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/powercontext/powercontext/db"
)

// figure is one measured number with everything needed to compare it across runs (-json, -baseline).
type figure struct {
	Section  string            `json:"section"`  // B1 … B5
	System   string            `json:"system"`   // ledger, river, ledger/river
	Engine   string            `json:"engine"`   // postgres, mysql, sqlite
	Settings map[string]string `json:"settings"` // what was run (workers, slots, lanes, …)
	Metric   string            `json:"metric"`
	Value    float64           `json:"value"`
	Unit     string            `json:"unit"`
	Note     string            `json:"note,omitempty"` // e.g. a run that timed out
}

// key identifies a figure across runs: everything but its value.
func (f figure) key() string {
	ks := make([]string, 0, len(f.Settings))
	for k := range f.Settings {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%s", f.Section, f.System, f.Engine, f.Metric)
	for _, k := range ks {
		fmt.Fprintf(&b, "|%s=%s", k, f.Settings[k])
	}
	return b.String()
}

// figureFile is the -json output (and the -baseline input).
type figureFile struct {
	Generated string   `json:"generated"`
	Commit    string   `json:"commit,omitempty"`
	Args      []string `json:"args"`
	Machine   []string `json:"machine"`
	Figures   []figure `json:"figures"`
}

func readFigures(path string) (figureFile, error) {
	var f figureFile
	b, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	return f, json.Unmarshal(b, &f)
}

func writeFigures(path string, f figureFile) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func (r *report) figureFile() figureFile {
	return figureFile{Generated: r.started.UTC().Format(time.RFC3339), Commit: gitCommit(), Args: r.args,
		Machine: r.machine, Figures: r.figures()}
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// figures lists every figure of the run.
func (r *report) figures() []figure {
	o := r.opts
	var out []figure
	add := func(section, system string, e db.Engine, settings map[string]string, metric string, v float64, unit string) {
		out = append(out, figure{Section: section, System: system, Engine: string(e), Settings: settings, Metric: metric, Value: v, Unit: unit})
	}
	b1Settings := func(x b1Result) map[string]string {
		enq := "1/tx"
		if x.bulk > 0 {
			enq = fmt.Sprintf("bulk %d/tx", x.bulk)
		}
		s := map[string]string{"workers": strconv.Itoa(x.workers), "slots": strconv.Itoa(x.slots),
			"lanes": strconv.Itoa(x.lanes), "n": strconv.Itoa(x.n), "enqueue": enq,
			"enqueuers": strconv.Itoa(o.enqueuers), "poll": o.poll.String()}
		if x.unique {
			s["unique"] = "ByArgs"
		}
		if x.mode != "" {
			s["mode"] = x.mode
		}
		return s
	}
	for _, x := range append(append(append([]b1Result{}, r.river...), r.b1...), r.graphile...) {
		if x.timedOut {
			add("B1", x.system, x.engine, b1Settings(x), "throughput", x.perSecond, "items/s")
			out[len(out)-1].Note = x.err.Error() + " (rate of the items done until then)"
			continue
		}
		if x.err != nil {
			continue
		}
		s := b1Settings(x)
		add("B1", x.system, x.engine, s, "throughput", x.perSecond, "items/s")
		add("B1", x.system, x.engine, s, "total", x.total.Seconds(), "s")
		add("B1", x.system, x.engine, s, "enqueue_phase", x.enqueued.Seconds(), "s")
		if x.tripsOK {
			add("B1", x.system, x.engine, s, "round_trips_per_item", x.tripsPerItem, "round trips")
		}
		if x.serverOK {
			add("B1", x.system, x.engine, s, "server_cpu_per_item", float64(x.serverCPU)/float64(time.Microsecond), "µs")
		}
		if x.system != "graphile" {
			add("B1", x.system, x.engine, s, "benchmark_cpu_per_item", float64(x.clientCPU)/float64(time.Microsecond), "µs")
		}
		if x.rowsOK {
			add("B1", x.system, x.engine, s, "rows_written_per_item", x.rowsPerItem, "rows")
		}
	}
	for _, x := range r.peerRatios() {
		if peerKey(x.peer) != "river" { // ledger/river is below, as before
			add("B1", "ledger/"+peerKey(x.peer), db.EnginePostgres, b1Settings(x.ledger), "throughput_ratio", x.ratio, "×")
		}
	}
	for _, x := range r.ratios() {
		add("B1", "ledger/river", db.EnginePostgres, b1Settings(x.ledger), "throughput_ratio", x.ratio, "×")
	}
	for _, x := range r.b2 {
		if x.err != nil {
			continue
		}
		s := map[string]string{"backlog": strconv.Itoa(x.backlog), "samples": strconv.Itoa(x.samples), "slots": "1"}
		add("B2", "ledger", x.engine, s, "claim_pass_p50", msf(x.claimP50), "ms")
		add("B2", "ledger", x.engine, s, "claim_pass_p90", msf(x.claimP90), "ms")
		add("B2", "ledger", x.engine, s, "candidate_query_p50", msf(x.candP50), "ms")
		add("B2", "ledger", x.engine, s, "seed_time", msf(x.seedTime), "ms")
	}
	for _, e := range o.engines {
		if g, ok := r.b2Growth(e); ok {
			add("B2", "ledger", e, map[string]string{"from": strconv.Itoa(o.backlogs[0]), "to": strconv.Itoa(o.backlogs[len(o.backlogs)-1])},
				"claim_pass_p50_growth", g, "×")
		}
	}
	for _, x := range r.b3 {
		if x.err != nil {
			continue
		}
		s := map[string]string{"clients": strconv.Itoa(x.clients), "requests": strconv.Itoa(x.requests), "worker_slots": strconv.Itoa(b3Concurrency)}
		add("B3", "ledger", db.EnginePostgres, s, "latency_p50", msf(x.p50), "ms")
		add("B3", "ledger", db.EnginePostgres, s, "latency_p90", msf(x.p90), "ms")
		add("B3", "ledger", db.EnginePostgres, s, "latency_p99", msf(x.p99), "ms")
		add("B3", "ledger", db.EnginePostgres, s, "latency_max", msf(x.max), "ms")
		add("B3", "ledger", db.EnginePostgres, s, "overhead_p50", msf(x.ovP50), "ms")
		add("B3", "ledger", db.EnginePostgres, s, "overhead_p99", msf(x.ovP99), "ms")
		add("B3", "ledger", db.EnginePostgres, s, "throughput", x.rps, "req/s")
	}
	for _, x := range r.b4 {
		if x.err != nil {
			continue
		}
		one := map[string]string{"items": strconv.Itoa(x.items), "batch": "1", "lane": "existing"}
		add("B4", "ledger", x.engine, one, "enqueue", x.enqueue, "round trips")
		add("B4", "ledger", x.engine, one, "claim_pass", x.claim, "round trips")
		add("B4", "ledger", x.engine, one, "complete", x.complete, "round trips")
		add("B4", "ledger", x.engine, one, "lifecycle", x.total, "round trips")
		add("B4", "ledger", x.engine, one, "lifecycle_latency_p50", msf(x.latencyP50), "ms")
		add("B4", "ledger", x.engine, map[string]string{"items": strconv.Itoa(x.items), "batch": "1", "lane": "new"}, "lifecycle", x.newLaneTotal, "round trips")
		batch := map[string]string{"batch": strconv.Itoa(x.batch), "lane": "existing"}
		add("B4", "ledger", x.engine, batch, "enqueue_per_item", x.batchEnqueue, "round trips")
		add("B4", "ledger", x.engine, batch, "claim_per_item", x.batchClaim, "round trips")
		add("B4", "ledger", x.engine, batch, "complete_per_item", x.batchComplete, "round trips")
		add("B4", "ledger", x.engine, batch, "lifecycle_per_item", x.batchTotal, "round trips")
	}
	for _, x := range r.search {
		if x.err != nil {
			continue
		}
		st := map[string]string{"entries": strconv.Itoa(x.entries), "dims": strconv.Itoa(x.dims), "mode": x.mode,
			"queries": strconv.Itoa(x.queries)}
		add("search", "ledger", x.engine, st, "latency_p50", msf(x.p50), "ms")
		add("search", "ledger", x.engine, st, "latency_p99", msf(x.p99), "ms")
		add("search", "ledger", x.engine, st, "reads_p50", msf(x.readP50), "ms")
	}
	for _, x := range r.b5 {
		if x.err != nil {
			continue
		}
		s := map[string]string{"items": strconv.Itoa(x.items), "gap": x.gap.String(), "worker": "4 slots, poll 1s"}
		if x.engine == db.EnginePostgres && !x.notify {
			// Each engine's default run keeps the baseline's settings (notify on PostgreSQL, polling elsewhere), so
			// the before/after table compares them; only the non-default PostgreSQL run is marked.
			s["notify"] = "off"
		}
		add("B5", "ledger", x.engine, s, "enqueue_to_claim_p50", msf(x.p50), "ms")
		add("B5", "ledger", x.engine, s, "enqueue_to_claim_p90", msf(x.p90), "ms")
		add("B5", "ledger", x.engine, s, "enqueue_to_claim_p99", msf(x.p99), "ms")
		add("B5", "ledger", x.engine, s, "enqueue_to_claim_max", msf(x.max), "ms")
	}
	return out
}

// beforeAfterMetrics are the figures the before/after table shows (when the baseline has them).
var beforeAfterMetrics = map[string]bool{
	"B1/throughput": true, "B1/throughput_ratio": true, "B1/round_trips_per_item": true,
	"B2/claim_pass_p50": true, "B2/claim_pass_p50_growth": true,
	"B3/overhead_p99": true, "B3/latency_p99": true, "B3/latency_p50": true,
	"B4/lifecycle": true, "B4/lifecycle_per_item": true,
	"B5/enqueue_to_claim_p50": true, "B5/enqueue_to_claim_p99": true,
}

// beforeAfter writes the table comparing this run's key figures with the baseline's.
func (r *report) beforeAfter(w func(string, ...any)) {
	base := map[string]figure{}
	for _, f := range r.baseline.Figures {
		base[f.key()] = f
	}
	w("### Before → after\n\n")
	commit := r.baseline.Commit
	if commit == "" {
		commit = "unknown commit"
	}
	w("\"Before\" is `bench/baseline.json`: the same suite run on %s (%s, %s) on this machine; \"after\" is this run. Figures the baseline lacks are left out.\n\n", commit, r.baseline.Generated, strings.Join(r.baseline.Args, " "))
	w("| section | system | engine | settings | figure | before | after | change |\n| --- | --- | --- | --- | --- | ---: | ---: | ---: |\n")
	for _, f := range r.figures() {
		if !beforeAfterMetrics[f.Section+"/"+f.Metric] {
			continue
		}
		b, ok := base[f.key()]
		if !ok {
			continue
		}
		change := "–"
		if b.Value != 0 {
			change = fmt.Sprintf("%.2f×", f.Value/b.Value)
		}
		note := ""
		if b.Note != "" {
			note = " (" + b.Note + ")"
		}
		w("| %s | %s | %s | %s | %s | %s %s%s | %s %s | %s |\n", f.Section, f.System, f.Engine, settingsText(f.Settings), f.Metric,
			num(b.Value), f.Unit, note, num(f.Value), f.Unit, change)
	}
	w("\n")
}

func settingsText(s map[string]string) string {
	ks := make([]string, 0, len(s))
	for k := range s {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	parts := make([]string, 0, len(ks))
	for _, k := range ks {
		parts = append(parts, k+"="+s[k])
	}
	return strings.Join(parts, ", ")
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
