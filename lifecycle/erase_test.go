package lifecycle_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/sources"
)

// TestEraseScopeLeavesNoRow: erasing a scope cancels its pending work, refuses captures while it runs, and deletes
// every row of the scope in batches — checked by SQL over every pc_* table of the catalog (a table the test does
// not know fails it) — except the erase's own operation (the audit record: who asked and when). Another scope is
// untouched, and a new capture starts a fresh journal at position 1.
func TestEraseScopeLeavesNoRow(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		j := sources.NewJournal(s)
		const gone, kept = "gone/scope", "kept"
		for _, scope := range []string{gone, kept} {
			for i := range 3 {
				_, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: scope, SourceID: fmt.Sprint("s", i),
					Content: fmt.Sprintf("Fact %d of the team.", i), Metadata: json.RawMessage(`{"kind":"task-outcome"}`)})
				require.NoError(t, err)
			}
		}
		stop := runAll(t, l, s)
		flushBoth(t, l, gone)
		flushBoth(t, l, kept)
		f := &lifecycle.Forgetter{Ledger: l, MaxAttempts: 3}
		res, err := f.Forget(ctx, gone, "s0")
		require.NoError(t, err)
		waitStatus(t, l, res.Redaction.WorkID, db.StatusSucceeded)
		stop()

		// Enough Sources for several batches, and a window left queued (no worker runs).
		for i := 3; i < 1100; i++ {
			_, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: gone, SourceID: fmt.Sprint("s", i), Content: fmt.Sprintf("Fact %d of the team.", i)})
			require.NoError(t, err)
		}
		pending, err := l.Enqueue(ctx, memory.Consumer(3).EnqueueRequest(gone))
		require.NoError(t, err)
		require.True(t, pending.Created)
		// One row in each Skills table of both scopes (docs/skills.md).
		for _, scope := range []string{gone, kept} {
			insertSkillRows(t, s, scope)
		}

		e := &lifecycle.Eraser{Ledger: l, MaxAttempts: 3}
		erase, err := e.Erase(ctx, gone, "alice")
		require.NoError(t, err)
		joined, err := e.Erase(ctx, gone, "bob")
		require.NoError(t, err)
		require.Equal(t, erase.WorkID, joined.WorkID, "a live erase is joined")
		_, err = j.Capture(ctx, sources.CaptureRequest{ScopeID: gone, Content: "late"})
		require.ErrorIs(t, err, sources.ErrScopeErasing)
		idle, err := l.Enqueue(ctx, experience.Consumer(3).EnqueueRequest(gone))
		require.NoError(t, err)
		require.True(t, idle.Idle, "no window of a scope being erased")

		w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w-erase", Concurrency: 1, Poll: 10 * time.Millisecond,
			Logger: zerolog.Nop()}, &lifecycle.EraseHandler{Ledger: l, Poll: 10 * time.Millisecond})
		require.NoError(t, err)
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(wctx) }()
		finished := waitStatus(t, l, erase.WorkID, db.StatusSucceeded)
		cancel()
		require.NoError(t, <-done)
		var r lifecycle.EraseResult
		require.NoError(t, json.Unmarshal(finished.ResultPayload, &r))
		require.Equal(t, lifecycle.EraseResult{Type: "scope_erase", RequestedBy: "alice", CancelledOperations: 1,
			DeletedOperations: 4, DeletedSources: 1100, DeletedRevisions: 2, DeletedEntries: 4, DeletedCandidates: 3,
			DeletedEmbeddings: 2, DeletedSkillRows: 5}, r,
			"revision 1 had 3 entries, the forgotten s0 left it with 2; revision 2 has 2, with their vectors (the latest only)")
		require.Contains(t, string(finished.Payload), `"requested_by":"alice"`)
		cancelled, err := l.Get(ctx, pending.Item.WorkID)
		require.ErrorIs(t, err, db.ErrNotFound, "the cancelled window was deleted too (%v)", cancelled.Status)

		requireNoRowOf(t, s, gone, erase.WorkID)

		m, err := memory.Reader{Store: s}.Current(ctx, gone)
		require.NoError(t, err)
		require.Zero(t, m.Revision)
		fresh, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: gone, Content: "A new beginning."})
		require.NoError(t, err)
		require.Equal(t, int64(1), fresh.JournalPosition, "a fresh journal")
		next, err := l.Enqueue(ctx, memory.Consumer(3).EnqueueRequest(gone))
		require.NoError(t, err)
		require.True(t, next.Created)
		require.Equal(t, sources.WindowPayload{CursorName: memory.CursorName, After: 0, Through: 1, HighWatermark: 1}, decode(t, next.Item),
			"a fresh cursor")

		keptMem, err := memory.Reader{Store: s}.Current(ctx, kept)
		require.NoError(t, err)
		require.Equal(t, int64(1), keptMem.Revision)
		require.Len(t, keptMem.Entries, 3)
		keptVecs, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: kept, Revision: 1})
		require.NoError(t, err)
		require.Len(t, keptVecs, 3, "another scope keeps its vectors")
		keptSrc, err := j.List(ctx, kept, 0, 10)
		require.NoError(t, err)
		require.Len(t, keptSrc, 3)
		keptSkills, err := s.SkillList(ctx, db.ScopeLimitParams{ScopeID: kept, Limit: 10})
		require.NoError(t, err)
		require.Len(t, keptSkills, 1, "another scope keeps its skills")
		keptTargets, err := s.SkillTargetList(ctx, db.ScopeLimitParams{ScopeID: kept, Limit: 10})
		require.NoError(t, err)
		require.Len(t, keptTargets, 1)
	})
}

// insertSkillRows writes one skill, revision (with its candidate row), target and publication of scope.
func insertSkillRows(t *testing.T, s db.Store, scope string) {
	t.Helper()
	ctx := context.Background()
	now, err := s.DBNow(ctx)
	require.NoError(t, err)
	digest := strings.Repeat("a", 64)
	require.NoError(t, s.SkillInsert(ctx, db.Skill{ScopeID: scope, SkillName: "lesson", CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}))
	require.NoError(t, s.SkillRevisionInsert(ctx, db.SkillRevision{ScopeID: scope, SkillName: "lesson", Revision: 1, TreeDigest: digest,
		ArchiveDigest: digest, FileCount: 1, ByteSize: 10, Archive: []byte("archive"), SourceCandidateIDs: []byte(`["` + uuid.NewString() + `"]`), CreatedAt: now}))
	target := uuid.NewString()
	require.NoError(t, s.SkillTargetInsert(ctx, db.SkillTarget{TargetID: target, ScopeID: scope, AgentKind: "generic", DisplayName: "t",
		Generation: 1, CreatedAt: now, UpdatedAt: now}))
	require.NoError(t, s.SkillPublicationInsert(ctx, db.SkillPublication{TargetID: target, SkillName: "lesson", ScopeID: scope,
		DesiredState: "published", DesiredRevision: 1, State: "pending", Generation: 1, CreatedAt: now, UpdatedAt: now}))
}

// requireNoRowOf checks every pc_* table of the database's catalog for rows of scope. Tables with a scope_id
// column must hold none, except the erase operation eraseID itself (the audit record); the others are classified
// below. A scheduler scan's continuation may still name the scope until that scan's next page moves past it: it is a
// keyset position, not data of the scope, and the erase cannot lock it without breaking the lock order.
func requireNoRowOf(t *testing.T, s db.Store, scope, eraseID string) {
	t.Helper()
	sqlDB, tables := pcTables(t, s)
	ph := func(n int) string {
		if s.Engine() == db.EnginePostgres {
			return fmt.Sprintf("$%d", n)
		}
		return "?"
	}
	var scopeColQ string
	switch s.Engine() {
	case db.EnginePostgres:
		scopeColQ = `SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'scope_id'`
	case db.EngineMySQL:
		scopeColQ = `SELECT count(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'scope_id'`
	default:
		scopeColQ = `SELECT count(*) FROM pragma_table_info(?) WHERE name = 'scope_id'`
	}
	require.Contains(t, tables, "pc_sources")

	count := func(q string, args ...any) int64 {
		var n int64
		require.NoError(t, sqlDB.QueryRow(q, args...).Scan(&n), q)
		return n
	}
	lanes := []any{memory.Consumer(1).LaneKey(scope), experience.Consumer(1).LaneKey(scope)}
	deploymentWide := map[string]bool{"pc_scheduler_leases": true, "pc_scheduler_scans": true, "pc_runtime_members": true,
		"pc_rate_limit_windows": true, "pc_ui_sessions": true} // a dashboard session belongs to a principal, not a scope
	for _, table := range tables {
		var n int64
		switch {
		case count(scopeColQ, table) == 1:
			q := fmt.Sprintf("SELECT count(*) FROM %s WHERE scope_id = %s", table, ph(1))
			args := []any{scope}
			if table == "pc_work_items" {
				q += " AND work_id <> " + ph(2)
				args = append(args, eraseID)
				require.EqualValues(t, 1, count("SELECT count(*) FROM pc_work_items WHERE work_id = "+ph(1), eraseID), "the erase's audit row stays")
			}
			n = count(q, args...)
		case table == "pc_work_attempts":
			n = count("SELECT count(*) FROM pc_work_attempts a WHERE a.work_id <> "+ph(1)+
				" AND NOT EXISTS (SELECT 1 FROM pc_work_items w WHERE w.work_id = a.work_id)", eraseID)
		case table == "pc_work_lanes": // the consumers' lanes go; the erase lane holds the audit row
			n = count("SELECT count(*) FROM pc_work_lanes WHERE lane_key IN ("+ph(1)+", "+ph(2)+")", lanes...)
		case table == "pc_work_keys":
			n = count("SELECT count(*) FROM pc_work_keys WHERE lane_key IN ("+ph(1)+", "+ph(2)+", "+ph(3)+")", append(lanes, sources.EraseLaneKey(scope))...)
		case deploymentWide[table]:
			continue // no row of a scope: deployment coordination (a scan keeps only a keyset position)
		default:
			t.Fatalf("table %s is not classified: say how a scope's rows in it are found", table)
		}
		require.Zero(t, n, "rows of the erased scope left in %s", table)
	}
}

// pcTables lists the pc_* tables of the store's database from its catalog.
func pcTables(t *testing.T, s db.Store) (*sql.DB, []string) {
	t.Helper()
	sqlDB := enginetest.OpenSQLDB(t, enginetest.URLOf(t, s))
	var tablesQ string
	switch s.Engine() {
	case db.EnginePostgres:
		tablesQ = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	case db.EngineMySQL:
		tablesQ = `SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'`
	default:
		tablesQ = `SELECT name FROM sqlite_master WHERE type = 'table'`
	}
	rows, err := sqlDB.Query(tablesQ)
	require.NoError(t, err)
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		if strings.HasPrefix(name, "pc_") {
			tables = append(tables, name)
		}
	}
	require.NoError(t, rows.Err())
	return sqlDB, tables
}

// requireNowhere reads every row of every pc_* table and fails if any column holds one of the phrases.
func requireNowhere(t *testing.T, s db.Store, phrases ...string) {
	t.Helper()
	sqlDB, tables := pcTables(t, s)
	for _, table := range tables {
		rows, err := sqlDB.Query("SELECT * FROM " + table)
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			require.NoError(t, rows.Scan(ptrs...))
			for i, v := range vals {
				for _, p := range phrases {
					require.NotContains(t, string(v), p, "%s.%s still holds forgotten content", table, cols[i])
				}
			}
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
	}
}

// TestEraseRacesCaptures: goroutines keep capturing into a scope while it is erased by a real worker. Every capture
// either lands or is refused with ErrScopeErasing (never a deadlock or another error), and afterwards the scope's
// journal is dense from position 1 with its head at the last position: nothing captured during the erase survived
// half-deleted, and the captures after it started a fresh journal.
func TestEraseRacesCaptures(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		j := sources.NewJournal(s)
		const scope = "racy"
		for i := range 50 {
			_, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: scope, Content: fmt.Sprintf("Fact %d.", i)})
			require.NoError(t, err)
		}
		stop := runAll(t, l, s)
		defer stop()

		var refused, landed atomic.Int64
		errs := make(chan error, 4)
		done := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-done:
						return
					default:
					}
					_, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: scope, Content: fmt.Sprintf("Late %d/%d.", g, i)})
					switch {
					case err == nil:
						landed.Add(1)
					case errors.Is(err, sources.ErrScopeErasing):
						refused.Add(1)
					default:
						errs <- err
						return
					}
				}
			}()
		}
		// The capturers are running before the erase is asked for (else a fast erase can finish before any of
		// them tries, and none is refused).
		testutil.Eventually(t, 30*time.Second, func() bool { return landed.Load() >= 4 }, "the capturers never got going")
		erase, err := (&lifecycle.Eraser{Ledger: l, MaxAttempts: 5}).Erase(ctx, scope, "ops")
		require.NoError(t, err)
		waitStatus(t, l, erase.WorkID, db.StatusSucceeded)
		afterErase := landed.Load()
		testutil.Eventually(t, 30*time.Second, func() bool { return landed.Load() >= afterErase+4 },
			"no captures landed after the erase")
		close(done)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Positive(t, refused.Load(), "captures were refused while the erase ran")
		list, err := s.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, AfterPosition: 0, Limit: 100000})
		require.NoError(t, err)
		head, err := sources.Head(ctx, s, scope)
		require.NoError(t, err)
		require.Equal(t, int64(len(list)), head, "the head is the last position")
		for i, src := range list {
			require.Equal(t, int64(i+1), src.JournalPosition, "dense from 1")
			require.True(t, strings.HasPrefix(src.Content, "Late "), "nothing from before the erase")
		}
		t.Logf("%d captures landed, %d refused; %d Sources after the erase", landed.Load(), refused.Load(), len(list))
	})
}
