package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/powercontext/powercontext/db"
)

// graphileMinNode is the oldest Node.js the graphile-worker release in bench/graphile supports (its engines field).
var graphileMinNode = [3]int{22, 18, 0}

// graphileModes are the Graphile Worker settings B1 runs: its defaults, and its performance guide's batching.
var graphileModes = []string{"default", "batched"}

// graphileRuntime finds what the Graphile Worker peer needs: bench/graphile's installed packages (`npm ci` there)
// and a Node.js at least graphileMinNode (the one the `node` package installed there, else the one on PATH). why
// says what is missing.
func graphileRuntime(dir string) (node, version string, why string) {
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "graphile-worker", "package.json")); err != nil {
		return "", "", fmt.Sprintf("%s/node_modules/graphile-worker is not installed (run `npm ci` in %s)", dir, dir)
	}
	var candidates []string
	if p, err := filepath.Abs(filepath.Join(dir, "node_modules", ".bin", "node")); err == nil {
		candidates = append(candidates, p)
	}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	why = "no node found"
	for _, c := range candidates {
		out, err := exec.Command(c, "--version").Output()
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(out))
		if !versionAtLeast(v, graphileMinNode) {
			why = fmt.Sprintf("%s is Node.js %s, graphile-worker needs ≥ %d.%d.%d", c, v, graphileMinNode[0], graphileMinNode[1], graphileMinNode[2])
			continue
		}
		return c, v, ""
	}
	return "", "", why
}

func versionAtLeast(v string, min [3]int) bool {
	f := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	for i := range 3 {
		if i >= len(f) {
			return false
		}
		n, err := strconv.Atoi(f[i])
		if err != nil {
			return false
		}
		if n != min[i] {
			return n > min[i]
		}
	}
	return true
}

// graphileVersion is the installed graphile-worker's version (its package.json).
func graphileVersion(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "graphile-worker", "package.json"))
	if err != nil {
		return "unknown"
	}
	var p struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &p) != nil {
		return "unknown"
	}
	return p.Version
}

// graphileOut is bench/graphile/b1.mjs's JSON line.
type graphileOut struct {
	N         int     `json:"n"`
	TotalS    float64 `json:"total_s"`
	EnqueueS  float64 `json:"enqueue_s"`
	PerSecond float64 `json:"per_second"`
	Dups      int     `json:"duplicates"`
	Missing   int     `json:"missing"`
	Overlaps  int     `json:"overlaps"`
	Inversion int     `json:"inversions"`
	Pairs     int     `json:"ordered_pairs_checked"`
	OrderOK   bool    `json:"order_ok"`
}

// runGraphileB1 runs B1's workload on Graphile Worker (bench/graphile/b1.mjs) in a scratch database of its own
// (Graphile Worker's schema graphile_worker, migrated by the script), dropped after: named queue q<i mod L> per
// lane, cfg.enqueuers enqueuers (addJob, or addJobs with cfg.bulk jobs per call), cfg.workers worker processes with
// concurrency cfg.slots and poll interval cfg.poll, with its default settings or (mode "batched") its performance
// guide's batching. Rows written are read from the scratch database's pg_stat_user_tables after the script exited.
func runGraphileB1(ctx context.Context, srv *servers, cfg b1Config, mode, node, dir string) (res b1Result) {
	res = b1Result{system: "graphile", engine: db.EnginePostgres, lanes: cfg.lanes, n: cfg.n, workers: cfg.workers, slots: cfg.slots, bulk: cfg.bulk, mode: mode}
	name := newName("pcb_graphile")
	if _, err := srv.pgAdmin.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		res.err = err
		return res
	}
	defer func() {
		_, _ = srv.pgAdmin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
	}()
	u, err := url.Parse(srv.pgDSN)
	if err != nil {
		res.err = err
		return res
	}
	u.Path = "/" + name
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	conn, err := sql.Open("pgx", u.String())
	if err != nil {
		res.err = err
		return res
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)

	cmd := exec.CommandContext(ctx, node, "b1.mjs", "--conn", u.String(), "--n", strconv.Itoa(cfg.n), "--lanes", strconv.Itoa(cfg.lanes),
		"--enqueuers", strconv.Itoa(cfg.enqueuers), "--bulk", strconv.Itoa(cfg.bulk), "--workers", strconv.Itoa(cfg.workers),
		"--concurrency", strconv.Itoa(cfg.slots), "--poll", strconv.Itoa(int(cfg.poll.Milliseconds())), "--mode", mode)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		res.err = fmt.Errorf("graphile b1.mjs: %w", err)
		return res
	}
	var out graphileOut
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &out); err != nil {
		res.err = fmt.Errorf("graphile b1.mjs output %q: %w", stdout.String(), err)
		return res
	}
	res.total = seconds(out.TotalS)
	res.enqueued = seconds(out.EnqueueS)
	res.perSecond = out.PerSecond
	// No CPU figures: this process could only measure the script's whole life, migrations and start-up included.
	res.order = fmt.Sprintf("ok (%d ordered pairs checked)", out.Pairs)
	if !out.OrderOK {
		res.order = fmt.Sprintf("FAILED: %d duplicates, %d missing, %d overlaps, %d inversions", out.Dups, out.Missing, out.Overlaps, out.Inversion)
		res.err = fmt.Errorf("graphile order check %s", res.order)
	}
	if n, err := settledRows(ctx, pgRowsWritten(conn, "graphile_worker"), conn); err == nil {
		res.rowsPerItem, res.rowsOK = float64(n)/float64(cfg.n), true
	} else {
		res.rowsErr = err
	}
	return res
}
