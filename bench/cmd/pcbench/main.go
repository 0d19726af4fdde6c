// Command pcbench is powercontext's benchmark suite: ledger throughput against River on the same PostgreSQL in the
// same run (B1: one item per transaction, bulk enqueue, and a wider W×C; also River with unique jobs and Graphile
// Worker, bench/graphile, run as a Node.js subprocess; rows written per item), claim cost against backlog (B2), the flush
// API's latency (B3), database round trips per item lifecycle (B4) and the cross-process latency from enqueue to claim
// (B5), the latency of Memory search by mode and scope size (search), and, on request (-only portability, `make
// bench-portability`), the throughput of a scope's export, import and `server copy` (portability). It prints a table, writes it into BENCHMARKS.md between generated-section markers (keeping the hand-written
// notes around them) and, with -json, every figure with its section, system, engine, settings and unit.
//
// Run it with `make bench` from the repository root, or from bench/:
//
//	go run ./cmd/pcbench -out ../BENCHMARKS.md
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/powercontext/powercontext/db"
)

type options struct {
	n         int
	nSerial   int
	lanes     []int
	workers   int
	slots     int
	enqueuers int
	poll      time.Duration
	// completeDelay is the ledger workers' completer window (coordinator.WorkerConfig.CompleteDelay; 0 = the
	// service default, no window).
	completeDelay time.Duration
	engines       []db.Engine
	backlogs      []int
	b2Samples     int
	b3Clients     []int
	b3Reqs        int
	b4Items       int
	only          map[string]bool
	bulk          int
	wide          [2]int // W, C of the wide B1 runs
	b5Items       int
	b5Gap         time.Duration
	// search: entries per scope, vector lengths and timed queries per mode
	searchEntries []int
	searchDims    []int
	searchQueries int
	// portSources: the portability section's scope sizes (Sources)
	portSources []int
	// graphileDir is bench/graphile (the Graphile Worker peer's script and packages); requireGraphile makes a
	// missing Node.js or package an error instead of a skipped section.
	graphileDir     string
	requireGraphile bool
	jsonOut         string
	baseline        string
	out             string
	pgDSN           string
	mysqlDSN        string
}

func main() {
	var o options
	if raw, notify, ok := isB5Worker(os.Args[1:]); ok {
		if err := runB5Worker(raw, notify); err != nil {
			fmt.Fprintln(os.Stderr, "pcbench worker:", err)
			os.Exit(1)
		}
		return
	}
	var lanes, engines, backlogs, clients, only, wide, searchEntries, searchDims, portSources string
	flag.IntVar(&o.n, "n", 20000, "B1: items per throughput run")
	flag.IntVar(&o.nSerial, "n-serial", 2000, "B1: items of the single-lane (L=1) runs: a lane runs one item at a time, so its rate does not grow with N and 20,000 serial items would not fit the 10-minute budget")
	flag.StringVar(&lanes, "lanes", "1000,1", "B1: lane counts (comma list)")
	flag.IntVar(&o.workers, "workers", 2, "B1: workers W (coordinator.Workers / River clients), each with its own pool")
	flag.IntVar(&o.slots, "slots", 8, "B1: execution slots C per worker (River MaxWorkers per client)")
	flag.DurationVar(&o.completeDelay, "complete-delay", 0, "B1: ledger workers' completer window (0 = the service default, none)")
	flag.IntVar(&o.enqueuers, "enqueuers", 8, "B1: concurrent enqueuer goroutines (one item per transaction)")
	flag.DurationVar(&o.poll, "poll", 20*time.Millisecond, "B1: worker poll interval (River FetchPollInterval is the same)")
	flag.StringVar(&engines, "engines", "postgres,mysql,sqlite", "engines (comma list)")
	flag.StringVar(&backlogs, "backlogs", "1000,10000,100000", "B2: queued backlog sizes")
	flag.IntVar(&o.b2Samples, "b2-samples", 200, "B2: timed claim passes per backlog")
	flag.StringVar(&clients, "b3-clients", "1,50", "B3: concurrent HTTP clients")
	flag.IntVar(&o.b3Reqs, "b3-requests", 1000, "B3: flush requests per client count")
	flag.IntVar(&o.b4Items, "b4-items", 100, "B4: item lifecycles counted per case")
	flag.IntVar(&o.bulk, "bulk", 1000, "B1 bulk: items per enqueue transaction (River InsertMany, ledger EnqueueMany)")
	flag.StringVar(&wide, "wide", "4x32", "B1 wide: workers x slots of the wide runs (ledger on postgres and mysql, River on postgres)")
	flag.IntVar(&o.b5Items, "b5-items", 200, "B5: items enqueued one at a time while a worker process waits")
	flag.DurationVar(&o.b5Gap, "b5-gap", 25*time.Millisecond, "B5: mean gap between enqueues (uniform gap/2 … 3·gap/2)")
	flag.StringVar(&searchEntries, "search-entries", "100,500,2000", "search: entries per scope (a revision holds at most 500; 2000 shows the trend beyond)")
	flag.StringVar(&searchDims, "search-dims", "512,1536", "search: vector lengths (512 = the local embedder, 1536 = a typical hosted embedding model)")
	flag.IntVar(&o.searchQueries, "search-queries", 100, "search: timed searches per engine, scope size, vector length and mode")
	flag.StringVar(&portSources, "portability-sources", "10000,100000", "portability: Sources of the exported, imported and copied scope (comma list)")
	flag.StringVar(&only, "only", "river,b1,bulk,riverunique,graphile,wide,riverref,b2,b3,b4,b5,search", "sections to run (comma list of river, b1, bulk, riverunique, graphile, wide, riverref, b2, b3, b4, b5, search, portability); portability, not in the default list, has its own part of the -out file (`make bench-portability`)")
	flag.StringVar(&o.graphileDir, "graphile-dir", "graphile", "graphile: the Graphile Worker peer's directory (b1.mjs, package.json; `npm ci` there installs it)")
	flag.BoolVar(&o.requireGraphile, "require-graphile", false, "graphile: fail when Node.js ≥ 22.18 or the installed graphile-worker package is missing (default: skip the section with a line saying why)")
	flag.StringVar(&o.jsonOut, "json", "", "also write every figure (section, system, engine, settings, metric, value, unit) to this JSON file")
	flag.StringVar(&o.baseline, "baseline", "baseline.json", "a -json file of an earlier run: the report compares the key figures with it (before → after); empty = none")
	flag.StringVar(&o.out, "out", "", "write the results into this Markdown file (between pcbench markers)")
	flag.StringVar(&o.pgDSN, "pg", envOr("PC_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL URL (an existing database; the benchmark creates and drops its own schemas)")
	flag.StringVar(&o.mysqlDSN, "mysql", envOr("PC_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test"), "MySQL/MariaDB go-sql-driver DSN (the benchmark creates and drops its own databases)")
	var cpuProfile string
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write this process's CPU profile (the enqueuers, workers, River's clients and the drivers) to this file, for `go tool pprof`")
	flag.BoolVar(&profileStatements, "statements", false, "B1 on MariaDB and SQLite: also print, per statement, how often it ran per item and its client time (a profile; not written to the report)")
	flag.Parse()
	o.lanes = ints(lanes)
	o.backlogs = ints(backlogs)
	o.b3Clients = ints(clients)
	o.searchEntries = ints(searchEntries)
	o.searchDims = ints(searchDims)
	o.portSources = ints(portSources)
	if w := ints(strings.ReplaceAll(wide, "x", ",")); len(w) == 2 {
		o.wide = [2]int{w[0], w[1]}
	} else {
		fmt.Fprintf(os.Stderr, "pcbench: -wide %q is not WxC\n", wide)
		os.Exit(2)
	}
	for _, e := range strings.Split(engines, ",") {
		if e = strings.TrimSpace(e); e != "" {
			o.engines = append(o.engines, db.Engine(e))
		}
	}
	o.only = map[string]bool{}
	for _, s := range strings.Split(only, ",") {
		o.only[strings.TrimSpace(s)] = true
	}
	stopProfile, err := startCPUProfile(cpuProfile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pcbench: -cpuprofile:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err = run(ctx, o, os.Args[1:])
	stop()
	stopProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pcbench:", err)
		os.Exit(1)
	}
}

// startCPUProfile starts this process's CPU profile into path (none when path is empty); the returned func stops it.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pcbench: %q is not a number\n", f)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}

func run(ctx context.Context, o options, args []string) error {
	started := time.Now()
	srv, err := newServers(ctx, dsnIf(o, db.EnginePostgres), dsnIf(o, db.EngineMySQL))
	if err != nil {
		return err
	}
	defer srv.close()
	rep := &report{opts: o, args: args, started: started}
	rep.machine = machineFacts(ctx, srv, o.engines)
	loadStart := loadAverage()
	progress := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "[%6.1fs] "+format+"\n", append([]any{time.Since(started).Seconds()}, a...)...)
	}

	cfg := b1Config{n: o.n, workers: o.workers, slots: o.slots, enqueuers: o.enqueuers, poll: o.poll, completeDelay: o.completeDelay}
	runRiver := func(c b1Config) {
		progress("B1 river on postgres, n=%d, %s", c.n, c.variant())
		r := runRiverB1(ctx, srv, c)
		progress("  -> %s", r.summary())
		rep.river = append(rep.river, r)
	}
	runLedger := func(e db.Engine, c b1Config) {
		progress("B1 ledger on %s, n=%d, lanes=%d, %s", e, c.n, c.lanes, c.variant())
		r := runLedgerB1(ctx, srv, e, c)
		progress("  -> %s", r.summary())
		rep.b1 = append(rep.b1, r)
	}
	pg := srv.has(db.EnginePostgres)
	if o.only["river"] && pg {
		runRiver(cfg)
	}
	if o.only["b1"] {
		for _, e := range o.engines {
			for _, l := range o.lanes {
				c := cfg
				c.lanes = l
				if l == 1 {
					c.n = o.nSerial
				}
				runLedger(e, c)
			}
		}
	}
	ratioLanes := 0
	for _, l := range o.lanes {
		ratioLanes = max(ratioLanes, l)
	}
	if o.only["bulk"] && pg && o.bulk > 0 {
		c := cfg
		c.bulk, c.lanes = o.bulk, ratioLanes
		runRiver(c)
		if has(o.engines, db.EnginePostgres) {
			runLedger(db.EnginePostgres, c)
		}
		if has(o.engines, db.EngineMySQL) { // MySQL mode's set-based bulk path (no River there: same-server ratios are PostgreSQL's)
			runLedger(db.EngineMySQL, c)
		}
	}
	peerBulks := []int{0} // the peers' runs: one item per transaction, and bulk
	if o.bulk > 0 {
		peerBulks = append(peerBulks, o.bulk)
	}
	if o.only["riverunique"] && pg {
		// River with unique jobs (every ledger item carries a logical key).
		for _, bulk := range peerBulks {
			c := cfg
			c.bulk, c.unique = bulk, true
			runRiver(c)
		}
	}
	if o.only["graphile"] && pg {
		node, version, why := graphileRuntime(o.graphileDir)
		if why != "" {
			if o.requireGraphile {
				return fmt.Errorf("graphile: %s", why)
			}
			progress("graphile: skipped: %s", why)
			rep.graphileSkipped = why
		} else {
			rep.graphileInfo = fmt.Sprintf("graphile-worker %s on Node.js %s", graphileVersion(o.graphileDir), version)
			for _, bulk := range peerBulks {
				for _, mode := range graphileModes {
					c := cfg
					c.bulk, c.lanes = bulk, ratioLanes
					progress("B1 graphile-worker (%s) on postgres, n=%d, lanes=%d, %s", mode, c.n, c.lanes, c.variant())
					r := runGraphileB1(ctx, srv, c, mode, node, o.graphileDir)
					progress("  -> %s, order check %s", r.summary(), r.order)
					rep.graphile = append(rep.graphile, r)
				}
			}
		}
	}
	if o.only["wide"] {
		c := cfg
		c.workers, c.slots, c.lanes = o.wide[0], o.wide[1], ratioLanes
		if pg {
			runRiver(c)
		}
		for _, e := range o.engines {
			if e != db.EngineSQLite {
				runLedger(e, c)
			}
		}
	}
	if o.only["riverref"] && pg {
		c := cfg
		c.workers, c.slots = 1, riverRefMaxWorkers
		runRiver(c)
	}
	if o.only["b2"] {
		for _, e := range o.engines {
			for i, m := range o.backlogs {
				progress("B2 %s backlog=%d", e, m)
				r := runB2(ctx, srv, e, m, o.b2Samples, i == len(o.backlogs)-1)
				progress("  -> claim p50 %s, candidates p50 %s, seeded in %s, err=%v", r.claimP50, r.candP50, r.seedTime.Round(time.Millisecond), r.err)
				rep.b2 = append(rep.b2, r)
			}
		}
	}
	if o.only["b4"] {
		for _, e := range o.engines {
			progress("B4 %s", e)
			r := runB4(ctx, srv, e, o.b4Items)
			progress("  -> enqueue %.1f claim %.1f complete %.1f total %.1f (new lane %.1f) err=%v", r.enqueue, r.claim, r.complete, r.total, r.newLaneTotal, r.err)
			rep.b4 = append(rep.b4, r)
		}
	}
	if o.only["b5"] {
		for _, e := range o.engines {
			if e == db.EngineSQLite {
				continue // single_node: one process
			}
			// PostgreSQL: with wake-ups (the service's default there), then polling only, like the other engines.
			modes := []bool{false}
			if e == db.EnginePostgres {
				modes = []bool{true, false}
			}
			for _, notify := range modes {
				progress("B5 %s, notify %t, %d items", e, notify, o.b5Items)
				r := runB5(ctx, srv, e, notify, o.b5Items, o.b5Gap)
				progress("  -> %s", r.summary())
				rep.b5 = append(rep.b5, r)
			}
		}
	}
	if o.only["search"] {
		for _, e := range o.engines {
			progress("search %s, entries %v, dims %v", e, o.searchEntries, o.searchDims)
			for _, r := range runSearch(ctx, srv, e, o.searchEntries, o.searchDims, o.searchQueries) {
				progress("  -> %d entries × %d dims %s", r.entries, r.dims, r.summary())
				rep.search = append(rep.search, r)
			}
		}
	}
	if o.only["portability"] {
		rep.portability = runPortability(ctx, srv, o.engines, o.portSources, progress)
	}
	if o.only["b3"] && srv.has(db.EnginePostgres) {
		for _, c := range o.b3Clients {
			progress("B3 flush API on postgres, clients=%d", c)
			r := runB3(ctx, srv, c, o.b3Reqs)
			progress("  -> %s", r.summary())
			rep.b3 = append(rep.b3, r)
		}
	}
	rep.elapsed = time.Since(started)
	rep.machine = append(rep.machine, fmt.Sprintf("Load average (1, 5, 15 min; other work on the machine shares the cores): %s at the start, %s at the end", loadStart, loadAverage()))
	if o.baseline != "" {
		base, err := readFigures(o.baseline)
		switch {
		case err == nil:
			rep.baseline = &base
		case os.IsNotExist(err):
			progress("no baseline %s: the report has no before/after table", o.baseline)
		default:
			return fmt.Errorf("baseline: %w", err)
		}
	}
	if o.jsonOut != "" {
		if err := writeFigures(o.jsonOut, rep.figureFile()); err != nil {
			return err
		}
		progress("wrote %s", o.jsonOut)
	}
	if o.only["portability"] {
		md := rep.portabilityMarkdown()
		fmt.Println(md)
		if o.out != "" {
			if err := writeSection(o.out, portBeginMarker, portEndMarker, md); err != nil {
				return err
			}
			progress("wrote the portability section of %s", o.out)
		}
		if len(o.only) == 1 {
			return nil // the portability section alone: the generated section of the other ones stays as it is
		}
	}
	md := rep.markdown()
	fmt.Println(md)
	if o.out != "" {
		if err := writeSection(o.out, beginMarker, endMarker, md); err != nil {
			return err
		}
		progress("wrote %s", o.out)
	}
	return nil
}

// riverRefMaxWorkers is the MaxWorkers of River's own benchmark command (riverbench), run once for reference.
const riverRefMaxWorkers = 2000

func has(engines []db.Engine, e db.Engine) bool {
	for _, x := range engines {
		if x == e {
			return true
		}
	}
	return false
}

func dsnIf(o options, e db.Engine) string {
	for _, x := range o.engines {
		if x == e {
			if e == db.EnginePostgres {
				return o.pgDSN
			}
			return o.mysqlDSN
		}
	}
	if e == db.EnginePostgres && (o.only["river"] || o.only["bulk"] || o.only["wide"] || o.only["riverref"] || o.only["b3"] || o.only["riverunique"] || o.only["graphile"]) {
		return o.pgDSN
	}
	return ""
}
