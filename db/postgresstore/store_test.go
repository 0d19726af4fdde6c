package postgresstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/postgresstore"
	"github.com/powercontext/powercontext/db/storetest"
)

func TestQueries(t *testing.T) {
	storetest.RunQueries(t, func(t *testing.T) db.Store { return openTestStore(t) })
}

func TestDomainQueries(t *testing.T) {
	storetest.RunDomainQueries(t, func(t *testing.T) db.Store { return openTestStore(t) })
}

// TestTouch exercises the no-op "Touch" updates that exist for parity with MySQL; the adapter never calls them.
func TestTouch(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	q := postgresgen.New(s.Pool())
	now, err := s.DBNow(ctx)
	require.NoError(t, err)
	now = now.Truncate(time.Microsecond)

	laneKey, logicalKey, workID, leaseName, scopeID := "lane", "key", uuid.NewString(), "lease", "scope"
	window := postgresgen.RateLimitWindowTouchParams{PrincipalKey: "p", PolicyID: "api", WindowStartedAt: now}
	cursor := postgresgen.SourceCursorTouchParams{ScopeID: scopeID, CursorName: "memory-source-window"}
	touchAll := func() []int64 {
		var out []int64
		for _, touch := range []func() (int64, error){
			func() (int64, error) { return q.WorkLaneTouch(ctx, laneKey) },
			func() (int64, error) { return q.WorkKeyTouch(ctx, logicalKey) },
			func() (int64, error) { return q.WorkItemTouch(ctx, workID) },
			func() (int64, error) { return q.SchedulerLeaseTouch(ctx, leaseName) },
			func() (int64, error) { return q.RateLimitWindowTouch(ctx, window) },
			func() (int64, error) { return q.SourceJournalHeadTouch(ctx, scopeID) },
			func() (int64, error) { return q.SourceCursorTouch(ctx, cursor) },
		} {
			n, err := touch()
			require.NoError(t, err)
			out = append(out, n)
		}
		return out
	}
	require.Equal(t, []int64{0, 0, 0, 0, 0, 0, 0}, touchAll())

	_, err = s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	_, err = s.WorkKeyInsertIfAbsent(ctx, db.WorkKey{LogicalKey: logicalKey, WorkID: workID, LaneKey: laneKey, CreatedAt: now})
	require.NoError(t, err)
	require.NoError(t, s.WorkItemInsert(ctx, db.WorkItem{
		WorkID: workID, LogicalKey: logicalKey, LaneKey: laneKey, LaneSequence: 1, Kind: "k", PayloadVersion: 1,
		ScopeID: "s", Payload: []byte(`{}`), Status: db.StatusQueued, AvailableAt: now, MaxAttempts: 1,
		StateVersion: 1, CreatedAt: now, UpdatedAt: now,
	}))
	_, err = s.SchedulerLeaseInsertIfAbsent(ctx, leaseName)
	require.NoError(t, err)
	_, err = s.RateLimitWindowInsertIfAbsent(ctx, db.RateLimitWindow{
		PrincipalKey: "p", PolicyID: "api", WindowStartedAt: now, RequestCount: 1, ExpiresAt: now.Add(time.Minute),
	})
	require.NoError(t, err)
	_, err = s.SourceJournalHeadInsertIfAbsent(ctx, scopeID)
	require.NoError(t, err)
	require.NoError(t, s.SourceCursorInsert(ctx, db.SourceCursor{ScopeID: scopeID, CursorName: cursor.CursorName, UpdatedAt: now}))
	require.Equal(t, []int64{1, 1, 1, 1, 1, 1, 1}, touchAll())

	item, err := s.WorkItemGet(ctx, workID)
	require.NoError(t, err)
	require.EqualValues(t, 1, item.StateVersion)
}

// TestInterpretError checks the driver error mapping on errors raised by the server.
func TestInterpretError(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)

	_, err := s.WorkLaneGet(ctx, "missing")
	require.ErrorIs(t, err, db.ErrNotFound)

	for code, want := range map[string]error{"40P01": db.ErrDeadlock, "40001": db.ErrDeadlock, "23505": db.ErrConflict} {
		_, err := s.Pool().Exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '`+code+`'; END $$`)
		require.Error(t, err)
		err = postgresstore.InterpretErrorForTest(err)
		require.ErrorIs(t, err, want, code)
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr, "the driver error stays in the chain")
		require.Equal(t, code, pgErr.Code)
	}
}

// openTestStore opens a store on a fresh schema of the database at PC_TEST_POSTGRES_DSN, with the desired schema
// applied. Temporary: to be replaced by enginetest.Open(t, db.EnginePostgres).
func openTestStore(t *testing.T) *postgresstore.Store {
	t.Helper()
	ctx := context.Background()
	dsn := os.Getenv("PC_TEST_POSTGRES_DSN")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	b := make([]byte, 8)
	_, err := rand.Read(b)
	require.NoError(t, err)
	schema := "t_" + hex.EncodeToString(b)

	admin, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		_ = admin.Close(context.Background())
	})

	u, err := url.Parse(dsn)
	require.NoError(t, err)
	qs := u.Query()
	qs.Set("search_path", schema)
	u.RawQuery = qs.Encode()
	s, err := postgresstore.Open(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })

	ddl, err := os.ReadFile("../../sql/schema/postgres/schema.sql")
	require.NoError(t, err)
	for _, stmt := range strings.Split(string(ddl), ";\n") {
		if strings.TrimSpace(stripComments(stmt)) == "" {
			continue
		}
		_, err := s.Pool().Exec(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	return s
}

func stripComments(sql string) string {
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteString("\n")
		}
	}
	return b.String()
}
