package sqlreview

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/powercontext/powercontext/db"
)

// The seeded size (the plans in docs/sql-review are taken at it): Items work items over Lanes lanes (lane_sequence
// 1–3 succeeded, 4 running and the lane head, 5–10 queued), one attempt per finished or running item, Scopes scopes
// with SourcesPerScope sources each, RevisionsPerScope memory revisions per scope with EntriesPerRevision entries
// each, embeddings for each scope's latest revision, and CandidatesPerScope Experience candidates per scope (their
// statuses in turn pending, approved, rejected, withdrawn).
const (
	Lanes              = 10000
	Items              = 10 * Lanes // the lane layout above: ten items per lane
	Scopes             = 1000
	SourcesPerScope    = 100
	RevisionsPerScope  = 10
	EntriesPerRevision = 10
	CandidatesPerScope = 20
)

// Seeded values that the representative parameters (params.go) point at, so that a primary-key lookup finds a row:
// the item (running, leased to worker-1) at the head of lane 1, its key, scope 1.
const (
	seedScope    = "scope-0001"
	seedSourceID = "source-000001"
	seedKind     = "review.noop"
	seedOwner    = "worker-1"
	seedModel    = "review-model"
)

// The running head of lane 1 is item 3 × Lanes + 1 (lane_sequence 4).
var (
	seedWorkID     = fmt.Sprintf("00000000-0000-4000-8000-%012d", 3*Lanes+1)
	seedLogicalKey = fmt.Sprintf("key-%06d", 3*Lanes+1)
)

// The first succeeded item of lane 1 (lane_sequence 1) and its key; seeded items have state_version 1.
var (
	seedSucceededWorkID  = fmt.Sprintf("00000000-0000-4000-8000-%012d", 1)
	seedSucceededKey     = fmt.Sprintf("key-%06d", 1)
	seedSucceededVersion = 1
)

// seedLane is the lane_key of lane 1 (64 characters, zero-padded).
var seedLane = fmt.Sprintf("%064d", 1)

// Seed fills a migrated, empty database with the seeded size and refreshes the planner statistics.
func Seed(ctx context.Context, sqlDB *sql.DB, engine db.Engine) error {
	stmts, ok := seedSQL[engine]
	if !ok {
		return fmt.Errorf("sqlreview: no seed for engine %q", engine)
	}
	for _, stmt := range stmts {
		if _, err := sqlDB.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("sqlreview: seed %s: %w\n%s", engine, err, stmt)
		}
	}
	return nil
}

// Series of g = 1..n per engine: PostgreSQL generate_series, MySQL cross-joined digit tables (no recursion limit),
// SQLite a recursive CTE.
const digits = `(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)`

var mysqlSeries = `(SELECT 1 + d0.d + 10*d1.d + 100*d2.d + 1000*d3.d + 10000*d4.d AS g FROM ` + digits + ` d0, ` + digits + ` d1, ` +
	digits + ` d2, ` + digits + ` d3, ` + digits + ` d4) s`

// seedSizes replaces the size placeholders of seedTemplate.
var seedSizes = strings.NewReplacer(
	"{LANES}", strconv.Itoa(Lanes), "{ITEMS}", strconv.Itoa(Items), "{SCOPES}", strconv.Itoa(Scopes),
	"{SOURCES}", strconv.Itoa(Scopes*SourcesPerScope), "{PERSCOPE}", strconv.Itoa(SourcesPerScope),
	"{REVISIONS}", strconv.Itoa(Scopes*RevisionsPerScope), "{PERREV}", strconv.Itoa(RevisionsPerScope),
	"{ENTRIES}", strconv.Itoa(EntriesPerRevision), "{CANDIDATES}", strconv.Itoa(Scopes*CandidatesPerScope),
)

// seedSQL is seedTemplate at the seeded size.
var seedSQL = func() map[db.Engine][]string {
	out := map[db.Engine][]string{}
	for e, stmts := range seedTemplate {
		for _, s := range stmts {
			out[e] = append(out[e], seedSizes.Replace(s))
		}
	}
	return out
}()

// seedTemplate fills the tables; {NAME} placeholders are the sizes (seedSizes).
var seedTemplate = map[db.Engine][]string{
	db.EnginePostgres: {
		`INSERT INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
		 SELECT lpad(g::text, 64, '0'), 11, 4 FROM generate_series(1, {LANES}) g`,
		`INSERT INTO pc_work_items (work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id,
		   payload, status, available_at, lease_owner, lease_fence, lease_expires_at, attempt_count, max_attempts,
		   state_version, created_at, updated_at, completed_at)
		 SELECT ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, 'key-' || lpad(g::text, 6, '0'),
		   lpad(((g - 1) % {LANES} + 1)::text, 64, '0'), (g - 1) / {LANES} + 1, 'review.noop', 1,
		   'scope-' || lpad(((g - 1) % {SCOPES} + 1)::text, 4, '0'), convert_to('{}', 'UTF8'),
		   CASE WHEN (g - 1) / {LANES} < 3 THEN 'succeeded' WHEN (g - 1) / {LANES} = 3 THEN 'running' ELSE 'queued' END,
		   t.ts + g * interval '1 second',
		   CASE WHEN (g - 1) / {LANES} = 3 THEN 'worker-1' END, CASE WHEN (g - 1) / {LANES} <= 3 THEN 1 ELSE 0 END,
		   CASE WHEN (g - 1) / {LANES} = 3 THEN t.ts + interval '2 days' END, CASE WHEN (g - 1) / {LANES} <= 3 THEN 1 ELSE 0 END,
		   5, 1, t.ts + g * interval '1 second', t.ts + g * interval '1 second',
		   CASE WHEN (g - 1) / {LANES} < 3 THEN t.ts + g * interval '1 second' END
		 FROM generate_series(1, {ITEMS}) g, (SELECT timestamptz '2026-01-01 00:00:00+00' AS ts) t`,
		`INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
		 SELECT logical_key, work_id, lane_key, created_at FROM pc_work_items`,
		`INSERT INTO pc_work_attempts (work_id, attempt_no, recovery_generation, owner_id, fence, started_at, finished_at, outcome)
		 SELECT work_id, 1, 0, 'worker-1', 1, created_at, completed_at, CASE WHEN status = 'succeeded' THEN 'succeeded' END
		 FROM pc_work_items WHERE status IN ('succeeded', 'running')`,
		`INSERT INTO pc_sources (scope_id, journal_position, source_id, source_type, content, metadata, created_at)
		 SELECT 'scope-' || lpad(((g - 1) % {SCOPES} + 1)::text, 4, '0'), (g - 1) / {SCOPES} + 1, 'source-' || lpad(g::text, 6, '0'),
		   'note', 'text', convert_to('{}', 'UTF8'), timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second'
		 FROM generate_series(1, {SOURCES}) g`,
		`INSERT INTO pc_source_journal_heads (scope_id, position, updated_at)
		 SELECT 'scope-' || lpad(g::text, 4, '0'), {PERSCOPE}, timestamptz '2026-01-01 00:00:00+00' FROM generate_series(1, {SCOPES}) g`,
		`INSERT INTO pc_memory_revisions (scope_id, revision, work_id, cursor_generation, window_after, window_through,
		   entry_count, created_at, last_entry_id)
		 SELECT 'scope-' || lpad(((g - 1) % {SCOPES} + 1)::text, 4, '0'), (g - 1) / {SCOPES} + 1,
		   ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, 1, 0, {ENTRIES}, {ENTRIES},
		   timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second', {ENTRIES}
		 FROM generate_series(1, {REVISIONS}) g`,
		`INSERT INTO pc_memory_entries (scope_id, revision, entry_no, content, source_positions, created_at, entry_id)
		 SELECT r.scope_id, r.revision, e, 'entry', convert_to('[1]', 'UTF8'), r.created_at, e
		 FROM pc_memory_revisions r, generate_series(1, {ENTRIES}) e`,
		`INSERT INTO pc_memory_embeddings (scope_id, revision, entry_no, model, dimensions, embedding, created_at)
		 SELECT scope_id, revision, entry_no, 'review-model', 1, '\x00000000'::bytea, created_at
		 FROM pc_memory_entries WHERE revision = {PERREV}`,
		`INSERT INTO pc_experience_candidates (candidate_id, scope_id, work_id, title, lesson, cited_positions, status,
		   state_version, created_at, updated_at)
		 SELECT ('00000000-0000-4000-9000-' || lpad(g::text, 12, '0'))::uuid, 'scope-' || lpad(((g - 1) % {SCOPES} + 1)::text, 4, '0'),
		   ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, 'lesson', 'text', convert_to('[1]', 'UTF8'),
		   (ARRAY['pending', 'approved', 'rejected', 'withdrawn'])[(g - 1) % 4 + 1], 1,
		   timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second', timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second'
		 FROM generate_series(1, {CANDIDATES}) g`,
		`ANALYZE`,
	},
	db.EngineMySQL: {
		`INSERT INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
		 SELECT LPAD(g, 64, '0'), 11, 4 FROM ` + mysqlSeries + ` WHERE g <= {LANES}`,
		`INSERT INTO pc_work_items (work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id,
		   payload, status, available_at, lease_owner, lease_fence, lease_expires_at, attempt_count, max_attempts,
		   state_version, created_at, updated_at, completed_at)
		 SELECT CONCAT('00000000-0000-4000-8000-', LPAD(g, 12, '0')), CONCAT('key-', LPAD(g, 6, '0')),
		   LPAD((g - 1) % {LANES} + 1, 64, '0'), (g - 1) DIV {LANES} + 1, 'review.noop', 1,
		   CONCAT('scope-', LPAD((g - 1) % {SCOPES} + 1, 4, '0')), CAST('{}' AS BINARY),
		   CASE WHEN (g - 1) DIV {LANES} < 3 THEN 'succeeded' WHEN (g - 1) DIV {LANES} = 3 THEN 'running' ELSE 'queued' END,
		   TIMESTAMP '2026-01-01 00:00:00' + INTERVAL g SECOND,
		   CASE WHEN (g - 1) DIV {LANES} = 3 THEN 'worker-1' END, CASE WHEN (g - 1) DIV {LANES} <= 3 THEN 1 ELSE 0 END,
		   CASE WHEN (g - 1) DIV {LANES} = 3 THEN TIMESTAMP '2026-01-03 00:00:00' END, CASE WHEN (g - 1) DIV {LANES} <= 3 THEN 1 ELSE 0 END,
		   5, 1, TIMESTAMP '2026-01-01 00:00:00' + INTERVAL g SECOND, TIMESTAMP '2026-01-01 00:00:00' + INTERVAL g SECOND,
		   CASE WHEN (g - 1) DIV {LANES} < 3 THEN TIMESTAMP '2026-01-01 00:00:00' + INTERVAL g SECOND END
		 FROM ` + mysqlSeries + ` WHERE g <= {ITEMS}`,
		`INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
		 SELECT logical_key, work_id, lane_key, created_at FROM pc_work_items`,
		`INSERT INTO pc_work_attempts (work_id, attempt_no, recovery_generation, owner_id, fence, started_at, finished_at, outcome)
		 SELECT work_id, 1, 0, 'worker-1', 1, created_at, completed_at, CASE WHEN status = 'succeeded' THEN 'succeeded' END
		 FROM pc_work_items WHERE status IN ('succeeded', 'running')`,
		`INSERT INTO pc_sources (scope_id, journal_position, source_id, source_type, content, metadata, created_at)
		 SELECT CONCAT('scope-', LPAD((g - 1) % {SCOPES} + 1, 4, '0')), (g - 1) DIV {SCOPES} + 1, CONCAT('source-', LPAD(g, 6, '0')),
		   'note', 'text', CAST('{}' AS BINARY), TIMESTAMP '2026-01-01 00:00:00' + INTERVAL g SECOND
		 FROM ` + mysqlSeries + ` WHERE g <= {SOURCES}`,
		`INSERT INTO pc_source_journal_heads (scope_id, position, updated_at)
		 SELECT CONCAT('scope-', LPAD(g, 4, '0')), {PERSCOPE}, TIMESTAMP '2026-01-01 00:00:00' FROM ` + mysqlSeries + ` WHERE g <= {SCOPES}`,
		`INSERT INTO pc_memory_revisions (scope_id, revision, work_id, cursor_generation, window_after, window_through,
		   entry_count, created_at, last_entry_id)
		 SELECT CONCAT('scope-', LPAD((g - 1) % {SCOPES} + 1, 4, '0')), (g - 1) DIV {SCOPES} + 1,
		   CONCAT('00000000-0000-4000-8000-', LPAD(g, 12, '0')), 1, 0, {ENTRIES}, {ENTRIES},
		   TIMESTAMP '2026-01-01 00:00:00' + INTERVAL g SECOND, {ENTRIES}
		 FROM ` + mysqlSeries + ` WHERE g <= {REVISIONS}`,
		`INSERT INTO pc_memory_entries (scope_id, revision, entry_no, content, source_positions, created_at, entry_id)
		 SELECT r.scope_id, r.revision, s.g, 'entry', CAST('[1]' AS BINARY), r.created_at, s.g
		 FROM pc_memory_revisions r, ` + mysqlSeries + ` WHERE s.g <= {ENTRIES}`,
		`INSERT INTO pc_memory_embeddings (scope_id, revision, entry_no, model, dimensions, embedding, created_at)
		 SELECT scope_id, revision, entry_no, 'review-model', 1, X'00000000', created_at
		 FROM pc_memory_entries WHERE revision = {PERREV}`,
		`INSERT INTO pc_experience_candidates (candidate_id, scope_id, work_id, title, lesson, cited_positions, status,
		   state_version, created_at, updated_at)
		 SELECT CONCAT('00000000-0000-4000-9000-', LPAD(g, 12, '0')), CONCAT('scope-', LPAD((g - 1) % {SCOPES} + 1, 4, '0')),
		   CONCAT('00000000-0000-4000-8000-', LPAD(g, 12, '0')), 'lesson', 'text', CAST('[1]' AS BINARY),
		   ELT((g - 1) % 4 + 1, 'pending', 'approved', 'rejected', 'withdrawn'), 1,
		   TIMESTAMP '2026-01-01 00:00:00' + INTERVAL g SECOND, TIMESTAMP '2026-01-01 00:00:00' + INTERVAL g SECOND
		 FROM ` + mysqlSeries + ` WHERE g <= {CANDIDATES}`,
		`ANALYZE TABLE pc_work_lanes, pc_work_items, pc_work_keys, pc_work_attempts, pc_sources, pc_source_journal_heads,
		   pc_memory_revisions, pc_memory_entries, pc_memory_embeddings, pc_experience_candidates`,
	},
	db.EngineSQLite: {
		`WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < {LANES})
		 INSERT INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
		 SELECT printf('%064d', g), 11, 4 FROM s`,
		`WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < {ITEMS})
		 INSERT INTO pc_work_items (work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id,
		   payload, status, available_at, lease_owner, lease_fence, lease_expires_at, attempt_count,
		   generation_attempt_count, recovery_generation, max_attempts, cancel_requested, state_version, created_at,
		   updated_at, completed_at)
		 SELECT printf('00000000-0000-4000-8000-%012d', g), printf('key-%06d', g), printf('%064d', (g - 1) % {LANES} + 1),
		   (g - 1) / {LANES} + 1, 'review.noop', 1, printf('scope-%04d', (g - 1) % {SCOPES} + 1), CAST('{}' AS BLOB),
		   CASE WHEN (g - 1) / {LANES} < 3 THEN 'succeeded' WHEN (g - 1) / {LANES} = 3 THEN 'running' ELSE 'queued' END,
		   1767225600000000 + g * 1000000,
		   CASE WHEN (g - 1) / {LANES} = 3 THEN 'worker-1' END, CASE WHEN (g - 1) / {LANES} <= 3 THEN 1 ELSE 0 END,
		   CASE WHEN (g - 1) / {LANES} = 3 THEN 1767398400000000 END, CASE WHEN (g - 1) / {LANES} <= 3 THEN 1 ELSE 0 END,
		   0, 0, 5, 0, 1, 1767225600000000 + g * 1000000, 1767225600000000 + g * 1000000,
		   CASE WHEN (g - 1) / {LANES} < 3 THEN 1767225600000000 + g * 1000000 END
		 FROM s`,
		`INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
		 SELECT logical_key, work_id, lane_key, created_at FROM pc_work_items`,
		`INSERT INTO pc_work_attempts (work_id, attempt_no, recovery_generation, owner_id, fence, started_at, finished_at, outcome)
		 SELECT work_id, 1, 0, 'worker-1', 1, created_at, completed_at, CASE WHEN status = 'succeeded' THEN 'succeeded' END
		 FROM pc_work_items WHERE status IN ('succeeded', 'running')`,
		`WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < {SOURCES})
		 INSERT INTO pc_sources (scope_id, journal_position, source_id, source_type, content, metadata, created_at)
		 SELECT printf('scope-%04d', (g - 1) % {SCOPES} + 1), (g - 1) / {SCOPES} + 1, printf('source-%06d', g), 'note', 'text',
		   CAST('{}' AS BLOB), 1767225600000000 + g * 1000000
		 FROM s`,
		`WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < {SCOPES})
		 INSERT INTO pc_source_journal_heads (scope_id, position, updated_at)
		 SELECT printf('scope-%04d', g), {PERSCOPE}, 1767225600000000 FROM s`,
		`WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < {REVISIONS})
		 INSERT INTO pc_memory_revisions (scope_id, revision, work_id, cursor_generation, window_after, window_through,
		   entry_count, created_at, last_entry_id)
		 SELECT printf('scope-%04d', (g - 1) % {SCOPES} + 1), (g - 1) / {SCOPES} + 1, printf('00000000-0000-4000-8000-%012d', g),
		   1, 0, {ENTRIES}, {ENTRIES}, 1767225600000000 + g * 1000000, {ENTRIES}
		 FROM s`,
		`WITH RECURSIVE e(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM e WHERE n < {ENTRIES})
		 INSERT INTO pc_memory_entries (scope_id, revision, entry_no, content, source_positions, created_at, entry_id)
		 SELECT r.scope_id, r.revision, e.n, 'entry', CAST('[1]' AS BLOB), r.created_at, e.n
		 FROM pc_memory_revisions r, e`,
		`INSERT INTO pc_memory_embeddings (scope_id, revision, entry_no, model, dimensions, embedding, created_at)
		 SELECT scope_id, revision, entry_no, 'review-model', 1, X'00000000', created_at
		 FROM pc_memory_entries WHERE revision = {PERREV}`,
		`WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < {CANDIDATES})
		 INSERT INTO pc_experience_candidates (candidate_id, scope_id, work_id, title, lesson, cited_positions, status,
		   state_version, created_at, updated_at)
		 SELECT printf('00000000-0000-4000-9000-%012d', g), printf('scope-%04d', (g - 1) % {SCOPES} + 1),
		   printf('00000000-0000-4000-8000-%012d', g), 'lesson', 'text', CAST('[1]' AS BLOB),
		   CASE (g - 1) % 4 WHEN 0 THEN 'pending' WHEN 1 THEN 'approved' WHEN 2 THEN 'rejected' ELSE 'withdrawn' END, 1,
		   1767225600000000 + g * 1000000, 1767225600000000 + g * 1000000
		 FROM s`,
		`ANALYZE`,
	},
}
