// Command pcbench is powercontext's benchmark suite (issue 9): ledger throughput against River on the same
// PostgreSQL in the same run (B1), claim cost against backlog (B2), the flush API's latency (B3) and database round
// trips per item lifecycle (B4). It prints a table and writes it into BENCHMARKS.md between generated-section
// markers, keeping the hand-written notes around them.
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
	engines   []db.Engine
	backlogs  []int
	b2Samples int
	b3Clients []int
	b3Reqs    int
	b4Items   int
	only      map[string]bool
	out       string
	pgDSN     string
	mysqlDSN  string
}

func main() {
	var o options
	var lanes, engines, backlogs, clients, only string
	flag.IntVar(&o.n, "n", 20000, "B1: items per throughput run")
	flag.IntVar(&o.nSerial, "n-serial", 2000, "B1: items of the single-lane (L=1) runs: a lane runs one item at a time, so its rate does not grow with N and 20,000 serial items would not fit the 10-minute budget")
	flag.StringVar(&lanes, "lanes", "1000,1", "B1: lane counts (comma list)")
	flag.IntVar(&o.workers, "workers", 2, "B1: workers W (coordinator.Workers / River clients), each with its own pool")
	flag.IntVar(&o.slots, "slots", 8, "B1: execution slots C per worker (River MaxWorkers per client)")
	flag.IntVar(&o.enqueuers, "enqueuers", 8, "B1: concurrent enqueuer goroutines (one item per transaction)")
	flag.DurationVar(&o.poll, "poll", 20*time.Millisecond, "B1: worker poll interval (River FetchPollInterval is the same)")
	flag.StringVar(&engines, "engines", "postgres,mysql,sqlite", "engines (comma list)")
	flag.StringVar(&backlogs, "backlogs", "1000,10000,100000", "B2: queued backlog sizes")
	flag.IntVar(&o.b2Samples, "b2-samples", 200, "B2: timed claim passes per backlog")
	flag.StringVar(&clients, "b3-clients", "1,50", "B3: concurrent HTTP clients")
	flag.IntVar(&o.b3Reqs, "b3-requests", 1000, "B3: flush requests per client count")
	flag.IntVar(&o.b4Items, "b4-items", 100, "B4: item lifecycles counted per case")
	flag.StringVar(&only, "only", "b1,river,b2,b3,b4", "sections to run (comma list of b1, river, b2, b3, b4)")
	flag.StringVar(&o.out, "out", "", "write the results into this Markdown file (between pcbench markers)")
	flag.StringVar(&o.pgDSN, "pg", envOr("PC_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL URL (an existing database; the benchmark creates and drops its own schemas)")
	flag.StringVar(&o.mysqlDSN, "mysql", envOr("PC_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test"), "MySQL/MariaDB go-sql-driver DSN (the benchmark creates and drops its own databases)")
	flag.Parse()
	o.lanes = ints(lanes)
	o.backlogs = ints(backlogs)
	o.b3Clients = ints(clients)
	for _, e := range strings.Split(engines, ",") {
		if e = strings.TrimSpace(e); e != "" {
			o.engines = append(o.engines, db.Engine(e))
		}
	}
	o.only = map[string]bool{}
	for _, s := range strings.Split(only, ",") {
		o.only[strings.TrimSpace(s)] = true
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pcbench:", err)
		os.Exit(1)
	}
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
	progress := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "[%6.1fs] "+format+"\n", append([]any{time.Since(started).Seconds()}, a...)...)
	}

	cfg := b1Config{n: o.n, workers: o.workers, slots: o.slots, enqueuers: o.enqueuers, poll: o.poll}
	if o.only["river"] && srv.has(db.EnginePostgres) {
		progress("B1 river on postgres, n=%d", o.n)
		r := runRiverB1(ctx, srv, cfg)
		progress("  -> %s", r.summary())
		rep.river = &r
	}
	if o.only["b1"] {
		for _, e := range o.engines {
			for _, l := range o.lanes {
				cfg.lanes = l
				cfg.n = o.n
				if l == 1 {
					cfg.n = o.nSerial
				}
				progress("B1 ledger on %s, n=%d, lanes=%d", e, cfg.n, l)
				r := runLedgerB1(ctx, srv, e, cfg)
				progress("  -> %s", r.summary())
				rep.b1 = append(rep.b1, r)
			}
		}
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
	if o.only["b3"] && srv.has(db.EnginePostgres) {
		for _, c := range o.b3Clients {
			progress("B3 flush API on postgres, clients=%d", c)
			r := runB3(ctx, srv, c, o.b3Reqs)
			progress("  -> %s", r.summary())
			rep.b3 = append(rep.b3, r)
		}
	}
	rep.elapsed = time.Since(started)
	md := rep.markdown()
	fmt.Println(md)
	if o.out != "" {
		if err := writeSection(o.out, md); err != nil {
			return err
		}
		progress("wrote %s", o.out)
	}
	return nil
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
	if e == db.EnginePostgres && (o.only["river"] || o.only["b3"]) {
		return o.pgDSN
	}
	return ""
}
