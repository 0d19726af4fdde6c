package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dbopen"
	sqlfiles "github.com/powercontext/powercontext/sql"
)

// b2Result is the claim cost at one backlog size.
type b2Result struct {
	engine     db.Engine
	backlog    int
	claimP50   time.Duration // one claim pass (candidate query + one claim transaction), slots = 1
	claimP90   time.Duration
	candP50    time.Duration // the unlocked candidate query alone
	seedTime   time.Duration
	samples    int
	err        error
	queryPlans string // EXPLAIN of the candidate query (PostgreSQL, largest backlog)
}

// The backlog is seeded with bulk SQL (one INSERT … SELECT per table) instead of M Enqueue calls, to keep setup
// fast. The rows are what Enqueue would write: every item is queued, available an hour ago, the head (sequence 1)
// of its own lane (lane next_sequence 2, head_sequence 1), with its logical key row. One item per lane is the
// hardest case for the claim candidate query (every item is a lane head it must consider).
var seedSQL = map[db.Engine][]string{
	db.EnginePostgres: {
		`INSERT INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
		 SELECT lpad(g::text, 64, '0'), 2, 1 FROM generate_series(1, $1::int) g`,
		`INSERT INTO pc_work_items (work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id,
		   payload, status, available_at, lease_fence, attempt_count, generation_attempt_count, recovery_generation,
		   max_attempts, cancel_requested, state_version, created_at, updated_at)
		 SELECT ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, lpad(g::text, 64, 'f'),
		   lpad(g::text, 64, '0'), 1, 'bench.noop', 1, 'scope-' || g, convert_to('{"n":' || g || '}', 'UTF8'), 'queued',
		   t.ts + g * interval '1 microsecond', 0, 0, 0, 0, 5, false, 1,
		   t.ts + g * interval '1 microsecond', t.ts + g * interval '1 microsecond'
		 FROM generate_series(1, $1::int) g, (SELECT clock_timestamp() - interval '1 hour' AS ts) t`,
		`INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
		 SELECT logical_key, work_id, lane_key, created_at FROM pc_work_items`,
		// VACUUM too: otherwise autovacuum processes the fresh 10⁵-row tables during the timed passes.
		`VACUUM ANALYZE pc_work_lanes, pc_work_items, pc_work_keys`,
		// And write the seed's dirty pages out now, not in a checkpoint during the timed passes.
		`CHECKPOINT`,
	},
	db.EngineMySQL: {
		`INSERT INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
		 SELECT LPAD(g, 64, '0'), 2, 1 FROM ` + mysqlSeq + ` WHERE g BETWEEN 1 AND ?`,
		`INSERT INTO pc_work_items (work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id,
		   payload, status, available_at, lease_fence, attempt_count, generation_attempt_count, recovery_generation,
		   max_attempts, cancel_requested, state_version, created_at, updated_at)
		 SELECT CONCAT('00000000-0000-4000-8000-', LPAD(g, 12, '0')), LPAD(g, 64, 'f'), LPAD(g, 64, '0'), 1,
		   'bench.noop', 1, CAST(CONCAT('scope-', g) AS BINARY), CAST(CONCAT('{"n":', g, '}') AS BINARY), 'queued',
		   UTC_TIMESTAMP(6) - INTERVAL 1 HOUR + INTERVAL g MICROSECOND, 0, 0, 0, 0, 5, FALSE, 1,
		   UTC_TIMESTAMP(6) - INTERVAL 1 HOUR + INTERVAL g MICROSECOND, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR + INTERVAL g MICROSECOND
		 FROM ` + mysqlSeq + ` WHERE g BETWEEN 1 AND ?`,
		`INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
		 SELECT logical_key, work_id, lane_key, created_at FROM pc_work_items`,
		`ANALYZE TABLE pc_work_lanes, pc_work_items, pc_work_keys`,
	},
	db.EngineSQLite: {
		`WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < ?)
		 INSERT INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
		 SELECT printf('%064d', g), 2, 1 FROM s`,
		`WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < ?),
		   t(ts) AS (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER) * 1000 - 3600000000)
		 INSERT INTO pc_work_items (work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id,
		   payload, status, available_at, lease_fence, attempt_count, generation_attempt_count, recovery_generation,
		   max_attempts, cancel_requested, state_version, created_at, updated_at)
		 SELECT printf('00000000-0000-4000-8000-%012d', g), printf('f%063d', g), printf('%064d', g), 1, 'bench.noop', 1,
		   'scope-' || g, CAST('{"n":' || g || '}' AS BLOB), 'queued', t.ts + g, 0, 0, 0, 0, 5, 0, 1, t.ts + g, t.ts + g
		 FROM s, t`,
		`INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
		 SELECT logical_key, work_id, lane_key, created_at FROM pc_work_items`,
		`ANALYZE`,
	},
}

// mysqlSeq is 1..999,999 without a sequence engine or recursion limits (portable across MySQL 8, MariaDB and
// OceanBase): six cross-joined digit tables.
const mysqlSeq = `(SELECT d0.d + 10*d1.d + 100*d2.d + 1000*d3.d + 10000*d4.d + 100000*d5.d AS g
 FROM (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) d0,
      (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) d1,
      (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) d2,
      (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) d3,
      (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) d4,
      (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) d5) seq`

// explainSQL is EXPLAIN ANALYZE of the PostgreSQL claim candidate query, read from the embedded query source
// (sql/queries/postgres/work_item.sql) so it can never drift from what sqlc compiles; sqlc.arg('kinds') and
// sqlc.arg('max_rows') become $1 and $2 as in the generated code.
func explainSQL() (string, error) {
	src, err := sqlfiles.Queries.ReadFile("queries/postgres/work_item.sql")
	if err != nil {
		return "", err
	}
	text := string(src)
	start := strings.Index(text, "-- name: WorkItemClaimCandidates :many\n")
	if start < 0 {
		return "", fmt.Errorf("WorkItemClaimCandidates not found in the embedded queries")
	}
	query, _, ok := strings.Cut(text[start:], ";")
	if !ok {
		return "", fmt.Errorf("WorkItemClaimCandidates has no terminating semicolon")
	}
	query = strings.NewReplacer("sqlc.arg('kinds')", "$1", "sqlc.arg('max_rows')", "$2").Replace(query)
	return "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)\n" + query, nil
}

func seed(ctx context.Context, sqlDB *sql.DB, engine db.Engine, m int) error {
	for _, stmt := range seedSQL[engine] {
		var args []any
		if strings.Contains(stmt, "?") || strings.Contains(stmt, "$1") {
			args = []any{m}
		}
		if _, err := sqlDB.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	return nil
}

// runB2 seeds backlog queued items and times `samples` claim passes with one idle slot; each claimed item is then
// completed (untimed), so the backlog stays within samples of its size.
func runB2(ctx context.Context, srv *servers, engine db.Engine, backlog, samples int, explain bool) b2Result {
	res := b2Result{engine: engine, backlog: backlog, samples: samples}
	bdb, err := srv.createDB(ctx, engine)
	if err != nil {
		res.err = err
		return res
	}
	defer bdb.drop()
	sqlDB, err := dbopen.SQLDB(ctx, bdb.url)
	if err != nil {
		res.err = err
		return res
	}
	defer sqlDB.Close()
	t0 := time.Now()
	if err := seed(ctx, sqlDB, engine, backlog); err != nil {
		res.err = err
		return res
	}
	res.seedTime = time.Since(t0)
	store, err := openStore(ctx, bdb, storeOptions{maxConns: 4})
	if err != nil {
		res.err = err
		return res
	}
	defer store.Close()
	l := coordinator.NewLedger(store)
	supported := coordinator.Supported{noopKind: {Min: 1, Max: 1}}

	// Warm-up: connections, statement caches, buffer cache.
	for range 5 {
		if _, err := store.WorkItemClaimCandidates(ctx, db.WorkItemClaimCandidatesParams{Kinds: []string{noopKind}, Limit: 32}); err != nil {
			res.err = err
			return res
		}
	}
	var claimTimes, candTimes []time.Duration
	for range samples {
		t := time.Now()
		if _, err := store.WorkItemClaimCandidates(ctx, db.WorkItemClaimCandidatesParams{Kinds: []string{noopKind}, Limit: 32}); err != nil {
			res.err = err
			return res
		}
		candTimes = append(candTimes, time.Since(t))

		t = time.Now()
		cr, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: "pcbench-b2", Supported: supported, Slots: 1, Lease: time.Minute})
		d := time.Since(t)
		if err != nil {
			res.err = err
			return res
		}
		if len(cr.Claims) != 1 {
			res.err = fmt.Errorf("claim pass claimed %d items, want 1", len(cr.Claims))
			return res
		}
		claimTimes = append(claimTimes, d)
		if _, err := l.Complete(ctx, cr.Claims[0], coordinator.Result{Code: "processed"}, nil); err != nil {
			res.err = err
			return res
		}
	}
	res.claimP50, res.claimP90 = percentile(claimTimes, 50), percentile(claimTimes, 90)
	res.candP50 = percentile(candTimes, 50)
	if explain && engine == db.EnginePostgres {
		query, err := explainSQL()
		var rows *sql.Rows
		if err == nil {
			rows, err = sqlDB.QueryContext(ctx, query, []string{noopKind}, 32)
		}
		if err == nil {
			for rows.Next() {
				var line string
				if rows.Scan(&line) == nil {
					res.queryPlans += line + "\n"
				}
			}
			_ = rows.Close()
		}
	}
	return res
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	if i > len(s) {
		i = len(s)
	}
	return s[i-1]
}
