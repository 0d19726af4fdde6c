package storetest

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/migrate"
	sqlfiles "github.com/powercontext/powercontext/sql"
)

// foundationCases check what every other test stands on: the embedded migrations apply to an empty database, are
// idempotent and record the Atlas revision history; the schema they produce equals the desired state
// (sql/schema/<engine>/schema.sql); the database clock is UTC; the atlas.sum guards applied migrations; the
// schema-migration lease serialises runs; Verify reports behind/ahead/dirty/edited databases; a failed migration
// leaves the database where the package documentation of db/migrate says it does.
var foundationCases = []foundationCase{
	{"Apply/FromEmptyIsIdempotent", testApplyFromEmptyIsIdempotent},
	{"Apply/SchemaMatchesDesiredState", testSchemaMatchesDesiredState},
	{"Apply/DatabaseTimeIsUTC", testDatabaseTimeIsUTC},
	{"Validate/EditedMigrationFails", testEditedMigrationFailsValidate},
	{"Verify/RehashedEditOfAppliedMigration", testRehashedEditOfAppliedMigration},
	{"Status/EmptyDatabase", testStatusAndVerifyOnEmptyDatabase},
	{"Apply/NewMigrationAppliesAlone", testNewMigrationAppliesAlone},
	{"Verify/DatabaseAheadOfBinary", testDatabaseAheadOfBinary},
	{"Verify/AheadByExpandOnly", testAheadByExpandOnly},
	{"Verify/BehindByContractOnly", testBehindByContractOnly},
	{"Apply/LeaseHeldByAnotherRun", testLeaseHeldByAnotherRun},
	{"Apply/ConcurrentRuns", testConcurrentRuns},
	{"Apply/ConcurrentFirstRuns", testConcurrentFirstRuns},
	{"Apply/FailedMigration", testFailedMigration},
	{"Apply/TxModeNone", testTxModeNone},
	{"Apply/TxModeUnsupported", testTxModeUnsupported},
	{"Apply/LeaseRenewedWhileFileRuns", testLeaseRenewedWhileFileRuns},
}

func testApplyFromEmptyIsIdempotent(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := newFoundationDB(t, engine)
	files := embeddedMigrationNames(t, engine)
	last := versionOf(files[len(files)-1])

	res, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "owner-1")
	require.NoError(t, err)
	require.Equal(t, files, res.Applied)
	require.False(t, res.NothingPending())
	require.Equal(t, last, res.Current)
	require.Equal(t, last, res.Expected)

	res, err = migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "owner-2")
	require.NoError(t, err)
	require.True(t, res.NothingPending(), "second run: nothing pending")
	require.Empty(t, res.Applied)
	require.Equal(t, last, res.Current)

	// The revisions table holds every version, complete, with the Atlas CLI's values.
	sums := embeddedSums(t, engine)
	revs := revisionRows(t, engine, fx.sqlDB)
	require.Len(t, revs, len(files))
	for i, r := range revs {
		require.Equal(t, files[i], r.version+"_"+r.description+".sql")
		require.EqualValues(t, 2, r.typ, "type 2 = executed")
		require.Positive(t, r.total)
		require.Equal(t, r.total, r.applied)
		require.False(t, r.errText.Valid, "no error")
		require.False(t, r.errStmt.Valid, "no error statement")
		require.False(t, r.partialHashes.Valid && r.partialHashes.String != "null", "no partial hashes once complete")
		require.Equal(t, sums[files[i]], r.hash, "hash is the file's atlas.sum hash")
		require.Equal(t, migrate.OperatorVersion, r.operator)
		require.Positive(t, r.executionTime)
	}

	status, err := migrate.Status(ctx, engine, fx.sqlDB)
	require.NoError(t, err)
	require.True(t, status.UpToDate())
	require.Equal(t, last, status.Current)
	require.NoError(t, migrate.Verify(ctx, engine, fx.sqlDB))

	// Both runs took and released the lease: owner and expiry cleared, fence kept (+1 per takeover).
	lease, err := fx.store.SchedulerLeaseGet(ctx, migrate.LeaseName)
	require.NoError(t, err)
	require.Empty(t, lease.OwnerID)
	require.True(t, lease.LeaseExpiresAt.IsZero())
	require.EqualValues(t, 2, lease.Fence)
}

func testSchemaMatchesDesiredState(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	migrated := newFoundationDB(t, engine)
	_, err := migrate.Apply(ctx, engine, migrated.sqlDB, migrated.store, "drift")
	require.NoError(t, err)

	desired := newFoundationDB(t, engine)
	b, err := fs.ReadFile(sqlfiles.Schema, path.Join("schema", string(engine), "schema.sql"))
	require.NoError(t, err)
	stmts, err := atlasmigrate.Stmts(string(b))
	require.NoError(t, err)
	require.NotEmpty(t, stmts)
	for _, s := range stmts {
		_, err := desired.sqlDB.ExecContext(ctx, s.Text)
		require.NoError(t, err, "schema.sql statement: %s", s.Text)
	}

	got, want := CatalogDump(t, engine, migrated.sqlDB), CatalogDump(t, engine, desired.sqlDB)
	require.Contains(t, strings.Join(want, "\n"), "pc_work_items", "the dump sees the schema")
	require.Equal(t, want, got, "the migrations must produce sql/schema/%s/schema.sql exactly "+
		"(add a migration for every schema change)", engine)
}

func testDatabaseTimeIsUTC(t *testing.T, engine db.Engine) {
	fx := newFoundationDB(t, engine)
	_, err := migrate.Apply(context.Background(), engine, fx.sqlDB, fx.store, "clock")
	require.NoError(t, err)
	now, err := fx.store.DBNow(context.Background())
	require.NoError(t, err)
	require.Equal(t, time.UTC, now.Location())
	// A session time zone other than UTC would shift the database clock by whole hours.
	require.WithinDuration(t, time.Now(), now, 5*time.Second)
}

func testEditedMigrationFailsValidate(t *testing.T, engine db.Engine) {
	// A copy of the directory on disk with one byte appended to the last migration, not rehashed.
	dir := t.TempDir()
	files := embeddedMigrationNames(t, engine)
	sub := embeddedMigrationsFS(t, engine)
	entries, err := fs.ReadDir(sub, ".")
	require.NoError(t, err)
	for _, e := range entries {
		b, err := fs.ReadFile(sub, e.Name())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600))
	}
	local, err := atlasmigrate.NewLocalDir(dir)
	require.NoError(t, err)
	require.NoError(t, migrate.Validate(local), "an untouched copy validates")

	edited := filepath.Join(dir, files[len(files)-1])
	f, err := os.OpenFile(edited, os.O_APPEND|os.O_WRONLY, 0) //nolint:gosec // a copy under the test's own temporary directory
	require.NoError(t, err)
	_, err = f.WriteString(" ")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	err = migrate.Validate(local)
	var cerr *migrate.ChecksumError
	require.ErrorAs(t, err, &cerr)
	require.Equal(t, files[len(files)-1], cerr.File)
	require.Equal(t, "edited", cerr.Reason)
	require.Contains(t, err.Error(), "make migrate-hash")

	// Apply refuses it before touching the database.
	fx := newFoundationDB(t, engine)
	_, err = migrate.Apply(context.Background(), engine, fx.sqlDB, fx.store, "edited", migrate.WithDir(local))
	require.ErrorAs(t, err, &cerr)
	status, err := migrate.Status(context.Background(), engine, fx.sqlDB)
	require.NoError(t, err)
	require.Empty(t, status.Applied, "nothing ran")
}

func testRehashedEditOfAppliedMigration(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := newFoundationDB(t, engine)
	_, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "first")
	require.NoError(t, err)

	files := embeddedMigrationNames(t, engine)
	dir := migrationDir(t, engine, nil)
	b, err := fs.ReadFile(dir, files[0])
	require.NoError(t, err)
	require.NoError(t, dir.WriteFile(files[0], append(b, []byte("\n-- edited after it was applied\n")...)))
	rehash(t, dir)
	require.NoError(t, migrate.Validate(dir), "the edit was rehashed")

	_, err = migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "second", migrate.WithDir(dir))
	var herr *migrate.HistoryChangedError
	require.ErrorAs(t, err, &herr)
	require.Equal(t, files[0], herr.File)

	err = migrate.Verify(ctx, engine, fx.sqlDB, migrate.WithDir(dir))
	var merr *migrate.SchemaMismatchError
	require.ErrorAs(t, err, &merr)
	require.Equal(t, migrate.SchemaEdited, merr.Reason)
}

func testStatusAndVerifyOnEmptyDatabase(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := newFoundationDB(t, engine)
	files := embeddedMigrationNames(t, engine)

	status, err := migrate.Status(ctx, engine, fx.sqlDB)
	require.NoError(t, err)
	require.Empty(t, status.Current)
	require.Equal(t, versionOf(files[len(files)-1]), status.Expected)
	require.Equal(t, files, status.Pending)
	require.False(t, status.UpToDate())

	err = migrate.Verify(ctx, engine, fx.sqlDB)
	var merr *migrate.SchemaMismatchError
	require.ErrorAs(t, err, &merr)
	require.Equal(t, migrate.SchemaBehind, merr.Reason)
	require.Empty(t, merr.Current)
	merr.DatabaseURL = fx.url.Redacted
	require.Contains(t, merr.Error(), "powercontext server migrate --database-url "+fx.url.Redacted)

	require.False(t, tableExists(t, engine, fx.sqlDB, migrate.RevisionsTable), "Status and Verify never write")
}

func testNewMigrationAppliesAlone(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := migratedFoundationDB(t, engine)
	before, err := fx.store.SchedulerLeaseGet(ctx, migrate.LeaseName)
	require.NoError(t, err)

	dir := migrationDir(t, engine, map[string]string{
		"20991231000000_extra.sql": "CREATE TABLE pc_test_extra (id INTEGER NOT NULL, PRIMARY KEY (id));\n",
	})
	res, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "extra", migrate.WithDir(dir))
	require.NoError(t, err)
	require.Equal(t, []string{"20991231000000_extra.sql"}, res.Applied)
	require.Equal(t, "20991231000000", res.Current)
	require.True(t, tableExists(t, engine, fx.sqlDB, "pc_test_extra"))
	require.NoError(t, migrate.Verify(ctx, engine, fx.sqlDB, migrate.WithDir(dir)))

	after, err := fx.store.SchedulerLeaseGet(ctx, migrate.LeaseName)
	require.NoError(t, err)
	require.Equal(t, before.Fence+1, after.Fence, "the run took the lease over once")
	require.Empty(t, after.OwnerID)
}

func testDatabaseAheadOfBinary(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := newFoundationDB(t, engine)
	dir := migrationDir(t, engine, map[string]string{
		"20991231000000_extra.sql": "CREATE TABLE pc_test_extra (id INTEGER NOT NULL, PRIMARY KEY (id));\n",
	})
	_, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "newer-binary", migrate.WithDir(dir))
	require.NoError(t, err)

	// This binary (the embedded directory) does not know 20991231000000.
	err = migrate.Verify(ctx, engine, fx.sqlDB)
	var merr *migrate.SchemaMismatchError
	require.ErrorAs(t, err, &merr)
	require.Equal(t, migrate.SchemaAhead, merr.Reason)
	require.Equal(t, "20991231000000", merr.Current)
	require.Contains(t, merr.Error(), "20991231000000_extra.sql")

	_, err = migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "older-binary")
	require.ErrorAs(t, err, &merr)
	require.Equal(t, migrate.SchemaAhead, merr.Reason)
}

// testAheadByExpandOnly: a database ahead of the binary only by expand_ migrations is accepted (Verify and Apply),
// and the binary's schema range reaches the database's version; one unmarked migration among them is refused.
func testAheadByExpandOnly(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := newFoundationDB(t, engine)
	expand := map[string]string{
		"20991230000000_expand_extra.sql": "CREATE TABLE pc_test_extra (id INTEGER NOT NULL, PRIMARY KEY (id));\n",
	}
	_, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "newer-binary", migrate.WithDir(migrationDir(t, engine, expand)))
	require.NoError(t, err)

	require.NoError(t, migrate.Verify(ctx, engine, fx.sqlDB), "this binary does not know the expand migration and accepts it")
	rep, err := migrate.Status(ctx, engine, fx.sqlDB)
	require.NoError(t, err)
	require.Equal(t, migrate.CompatAhead, rep.Compatibility())
	lo, hi := rep.SchemaRange()
	require.Equal(t, versionOf(rep.Expected), strconv.FormatInt(lo, 10))
	require.EqualValues(t, int64(20991230000000), hi)
	res, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "older-binary")
	require.NoError(t, err, "single_node of the older binary starts")
	require.True(t, res.NothingPending())

	expand["20991231000000_extra.sql"] = "CREATE TABLE pc_test_other (id INTEGER NOT NULL, PRIMARY KEY (id));\n"
	_, err = migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "newest-binary", migrate.WithDir(migrationDir(t, engine, expand)))
	require.NoError(t, err)
	err = migrate.Verify(ctx, engine, fx.sqlDB)
	var merr *migrate.SchemaMismatchError
	require.ErrorAs(t, err, &merr)
	require.Equal(t, migrate.SchemaAhead, merr.Reason)
	require.Contains(t, merr.Error(), "20991231000000_extra.sql")
	_, err = migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "older-binary")
	require.ErrorAs(t, err, &merr)
}

// testBehindByContractOnly: a binary whose only pending migrations are contract_ ones runs against the database
// (its range starts before them); an unmarked pending migration is refused.
func testBehindByContractOnly(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := newFoundationDB(t, engine)
	_, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "current")
	require.NoError(t, err)
	current, err := migrate.Status(ctx, engine, fx.sqlDB)
	require.NoError(t, err)

	contract := migrationDir(t, engine, map[string]string{
		"20991231000000_contract_drop_extra.sql": "CREATE TABLE pc_test_contract (id INTEGER NOT NULL, PRIMARY KEY (id));\n",
	})
	require.NoError(t, migrate.Verify(ctx, engine, fx.sqlDB, migrate.WithDir(contract)))
	rep, err := migrate.Status(ctx, engine, fx.sqlDB, migrate.WithDir(contract))
	require.NoError(t, err)
	require.Equal(t, migrate.CompatBehind, rep.Compatibility())
	lo, hi := rep.SchemaRange()
	require.Equal(t, current.Expected, strconv.FormatInt(lo, 10), "the range starts at the last migration that is not a contract")
	require.EqualValues(t, int64(20991231000000), hi)

	unmarked := migrationDir(t, engine, map[string]string{
		"20991231000000_drop_extra.sql": "CREATE TABLE pc_test_contract (id INTEGER NOT NULL, PRIMARY KEY (id));\n",
	})
	var merr *migrate.SchemaMismatchError
	require.ErrorAs(t, migrate.Verify(ctx, engine, fx.sqlDB, migrate.WithDir(unmarked)), &merr)
	require.Equal(t, migrate.SchemaBehind, merr.Reason)
}

func testLeaseHeldByAnotherRun(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := migratedFoundationDB(t, engine)

	// Another run holds the lease (written directly, on database time).
	var heldFence int64
	require.NoError(t, fx.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lease, now, err := q.SchedulerLeaseLock(ctx, migrate.LeaseName)
		if err != nil {
			return err
		}
		lease.OwnerID, lease.Fence = "other-run", lease.Fence+1
		lease.LeaseExpiresAt, lease.UpdatedAt = now.Add(time.Minute), now
		heldFence = lease.Fence
		return q.SchedulerLeaseUpdate(ctx, lease)
	}))

	dir := migrationDir(t, engine, map[string]string{
		"20991231000000_extra.sql": "CREATE TABLE pc_test_extra (id INTEGER NOT NULL, PRIMARY KEY (id));\n",
	})
	_, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "blocked", migrate.WithDir(dir))
	var lerr *migrate.LeaseHeldError
	require.ErrorAs(t, err, &lerr)
	require.Equal(t, "other-run", lerr.Owner)
	require.False(t, tableExists(t, engine, fx.sqlDB, "pc_test_extra"), "nothing applied without the lease")
	lease, err := fx.store.SchedulerLeaseGet(ctx, migrate.LeaseName)
	require.NoError(t, err)
	require.Equal(t, "other-run", lease.OwnerID, "the holder keeps its lease")

	// Once the holder's lease has expired, the next run takes it over with fence+1.
	require.NoError(t, fx.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lease, now, err := q.SchedulerLeaseLock(ctx, migrate.LeaseName)
		if err != nil {
			return err
		}
		lease.LeaseExpiresAt = now.Add(-time.Second)
		return q.SchedulerLeaseUpdate(ctx, lease)
	}))
	res, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "takeover", migrate.WithDir(dir))
	require.NoError(t, err)
	require.Equal(t, []string{"20991231000000_extra.sql"}, res.Applied)
	lease, err = fx.store.SchedulerLeaseGet(ctx, migrate.LeaseName)
	require.NoError(t, err)
	require.Equal(t, heldFence+1, lease.Fence)
	require.Empty(t, lease.OwnerID)
}

func testConcurrentRuns(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := migratedFoundationDB(t, engine)
	dir := migrationDir(t, engine, map[string]string{
		"20991231000000_extra.sql":  "CREATE TABLE pc_test_extra (id INTEGER NOT NULL, PRIMARY KEY (id));\n",
		"20991231000001_extra2.sql": "CREATE TABLE pc_test_extra2 (id INTEGER NOT NULL, PRIMARY KEY (id));\n",
	})

	results := runConcurrently(t, fx, engine, 3, migrate.WithDir(dir))
	applied := 0
	for _, r := range results {
		var lerr *migrate.LeaseHeldError
		switch {
		case r.err == nil && !r.res.NothingPending():
			applied++
			require.Equal(t, []string{"20991231000000_extra.sql", "20991231000001_extra2.sql"}, r.res.Applied)
		case r.err == nil:
		case errors.As(r.err, &lerr):
		default:
			require.NoError(t, r.err)
		}
	}
	require.Equal(t, 1, applied, "exactly one run applies the new migrations")
	require.NoError(t, migrate.Verify(ctx, engine, fx.sqlDB, migrate.WithDir(dir)))
}

func testConcurrentFirstRuns(t *testing.T, engine db.Engine) {
	// On an empty database the lease table does not exist yet, so concurrent first runs are not serialised: the
	// losers must fail cleanly (no dirty revision) and a rerun must be idempotent.
	ctx := context.Background()
	fx := newFoundationDB(t, engine)
	results := runConcurrently(t, fx, engine, 2)
	succeeded := 0
	for _, r := range results {
		if r.err == nil {
			succeeded++
		} else {
			t.Logf("concurrent first run failed cleanly: %v", r.err)
		}
	}
	require.Positive(t, succeeded)

	res, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "rerun")
	require.NoError(t, err)
	require.True(t, res.NothingPending())
	require.NoError(t, migrate.Verify(ctx, engine, fx.sqlDB))
}

func testFailedMigration(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := migratedFoundationDB(t, engine)

	const (
		createA = "CREATE TABLE pc_test_a (id INTEGER NOT NULL, PRIMARY KEY (id));\n"
		createB = "CREATE TABLE pc_test_b (id INTEGER NOT NULL, PRIMARY KEY (id));\n"
		createC = "CREATE TABLE pc_test_c (id INTEGER NOT NULL, PRIMARY KEY (id));\n"
		broken  = "20991231000000_broken.sql"
		later   = "20991231000001_later.sql"
	)
	// Statement 2 fails: pc_test_a exists already.
	dir := migrationDir(t, engine, map[string]string{
		broken: createA + createA + createB,
		later:  createC,
	})
	_, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "broken", migrate.WithDir(dir))
	var serr *migrate.StatementError
	require.ErrorAs(t, err, &serr)
	require.Equal(t, broken, serr.File)
	require.Equal(t, 2, serr.Statement)
	require.Equal(t, 3, serr.Total)
	require.False(t, tableExists(t, engine, fx.sqlDB, "pc_test_c"), "a later file never runs after a failure")

	status, err := migrate.Status(ctx, engine, fx.sqlDB, migrate.WithDir(dir))
	require.NoError(t, err)
	require.Equal(t, []string{broken, later}, status.Pending)

	if engine != db.EngineMySQL {
		// Transactional DDL: the file and its revision row were rolled back together.
		require.False(t, serr.Partial)
		require.Nil(t, status.Dirty)
		require.False(t, tableExists(t, engine, fx.sqlDB, "pc_test_a"), "rolled back")
	} else {
		// MySQL DDL commits implicitly: statement 1 stays applied and the revision records the failure.
		require.True(t, serr.Partial)
		require.NotNil(t, status.Dirty)
		require.Equal(t, 1, status.Dirty.Applied)
		require.Equal(t, 3, status.Dirty.Total)
		require.NotEmpty(t, status.Dirty.Error)
		require.Contains(t, status.Dirty.ErrorStmt, "pc_test_a")
		require.Len(t, status.Dirty.PartialHashes, 1)
		require.True(t, tableExists(t, engine, fx.sqlDB, "pc_test_a"))

		err = migrate.Verify(ctx, engine, fx.sqlDB, migrate.WithDir(dir))
		var merr *migrate.SchemaMismatchError
		require.ErrorAs(t, err, &merr)
		require.Equal(t, migrate.SchemaDirty, merr.Reason)

		// A rerun does not continue past the dirty revision: it retries the failed statement, which fails again.
		_, err = migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "retry", migrate.WithDir(dir))
		require.ErrorAs(t, err, &serr)
		require.Equal(t, 2, serr.Statement)
		require.False(t, tableExists(t, engine, fx.sqlDB, "pc_test_c"))

		// Editing a statement that was already applied is refused.
		edited := migrationDir(t, engine, map[string]string{broken: createB + createA + createB, later: createC})
		_, err = migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "edited", migrate.WithDir(edited))
		var herr *migrate.HistoryChangedError
		require.ErrorAs(t, err, &herr)
		require.Equal(t, 1, herr.Statement)
	}

	// Fixing the failed statement (and rehashing) lets the next run finish the file, then the later one.
	fixed := migrationDir(t, engine, map[string]string{broken: createA + createC + createB, later: "SELECT 1;\n"})
	res, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "fixed", migrate.WithDir(fixed))
	require.NoError(t, err)
	require.Equal(t, []string{broken, later}, res.Applied)
	require.NoError(t, migrate.Verify(ctx, engine, fx.sqlDB, migrate.WithDir(fixed)))
	for _, r := range revisionRows(t, engine, fx.sqlDB) {
		require.Equal(t, r.total, r.applied, r.version)
		require.False(t, r.errText.Valid, r.version)
		require.False(t, r.partialHashes.Valid && r.partialHashes.String != "null", r.version)
	}
}

// testTxModeNone: a file with `-- atlas:txmode none` runs statement by statement, each committed on its own, so
// PostgreSQL can build an index CONCURRENTLY (refused inside a transaction block). A failure leaves the statements
// before it applied and the revision dirty; after the operator fixes the cause (here: a duplicate, and on PostgreSQL
// the invalid index a failed concurrent build leaves behind), the next run resumes at the failed statement.
func testTxModeNone(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := migratedFoundationDB(t, engine)

	concurrently := ""
	if engine == db.EnginePostgres {
		concurrently = "CONCURRENTLY "
	}
	const table, online = "20991231000000_table.sql", "20991231000001_online_indexes.sql"
	dir := migrationDir(t, engine, map[string]string{
		table: "CREATE TABLE pc_test_t (id INTEGER NOT NULL, v INTEGER NOT NULL, PRIMARY KEY (id));\n" +
			"INSERT INTO pc_test_t (id, v) VALUES (1, 7), (2, 7);\n",
		online: "-- atlas:txmode none\n\n" +
			"CREATE INDEX " + concurrently + "pc_test_t_id_v ON pc_test_t (id, v);\n" +
			"CREATE UNIQUE INDEX " + concurrently + "pc_test_t_v ON pc_test_t (v);\n",
	})
	_, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "first", migrate.WithDir(dir))
	var serr *migrate.StatementError
	require.ErrorAs(t, err, &serr, "the unique index fails on the duplicate v")
	require.Equal(t, online, serr.File)
	require.Equal(t, 2, serr.Statement)
	require.True(t, serr.Partial, "statement 1 committed on its own")
	require.True(t, indexExists(t, engine, fx.sqlDB, "pc_test_t_id_v"))
	status, err := migrate.Status(ctx, engine, fx.sqlDB, migrate.WithDir(dir))
	require.NoError(t, err)
	require.NotNil(t, status.Dirty)
	require.Equal(t, 1, status.Dirty.Applied)
	require.Equal(t, 2, status.Dirty.Total)
	require.Contains(t, status.Dirty.ErrorStmt, "pc_test_t_v")

	// The operator's fix: remove the duplicate; on PostgreSQL also drop the invalid index the failed build left.
	_, err = fx.sqlDB.ExecContext(ctx, "DELETE FROM pc_test_t WHERE id = 2")
	require.NoError(t, err)
	if engine == db.EnginePostgres {
		var valid bool
		require.NoError(t, fx.sqlDB.QueryRowContext(ctx, `SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE c.relname = 'pc_test_t_v' AND c.relnamespace = current_schema()::regnamespace`).Scan(&valid))
		require.False(t, valid, "a failed concurrent build leaves an invalid index")
		_, err = fx.sqlDB.ExecContext(ctx, "DROP INDEX CONCURRENTLY pc_test_t_v")
		require.NoError(t, err)
	}
	res, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "resume", migrate.WithDir(dir))
	require.NoError(t, err)
	require.Equal(t, []string{online}, res.Applied)
	require.NoError(t, migrate.Verify(ctx, engine, fx.sqlDB, migrate.WithDir(dir)))
	require.True(t, indexExists(t, engine, fx.sqlDB, "pc_test_t_v"))
	_, err = fx.sqlDB.ExecContext(ctx, "INSERT INTO pc_test_t (id, v) VALUES (3, 7)")
	require.Error(t, err, "the unique index is built and enforced")
}

// testTxModeUnsupported: a txmode other than none (or file) is refused before any file runs, so a typo cannot
// change how a file is applied.
func testTxModeUnsupported(t *testing.T, engine db.Engine) {
	ctx := context.Background()
	fx := migratedFoundationDB(t, engine)
	dir := migrationDir(t, engine, map[string]string{
		"20991231000000_first.sql":  "CREATE TABLE pc_test_a (id INTEGER NOT NULL, PRIMARY KEY (id));\n",
		"20991231000001_second.sql": "-- atlas:txmode nome\n\nCREATE TABLE pc_test_b (id INTEGER NOT NULL, PRIMARY KEY (id));\n",
	})
	_, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "typo", migrate.WithDir(dir))
	require.ErrorContains(t, err, "20991231000001_second.sql: unsupported `-- atlas:txmode nome`")
	require.False(t, tableExists(t, engine, fx.sqlDB, "pc_test_a"), "nothing ran")
}

// testLeaseRenewedWhileFileRuns: a file's statement that runs long (here: it waits for a lock the test holds, as an
// index built CONCURRENTLY on a big table would take its time) keeps the schema-migration lease, renewed while it
// runs; when another run takes the lease over meanwhile, the statement is cancelled and Apply says the lease was lost.
func testLeaseRenewedWhileFileRuns(t *testing.T, engine db.Engine) {
	if engine == db.EngineSQLite {
		t.Skip("single_node applies migrations at start, alone; SQLite has no lock a test session can hold across a statement of another")
	}
	ctx := context.Background()
	fx := migratedFoundationDB(t, engine)

	// The test holds a row lock in a transaction; each file's statement waits for it.
	_, err := fx.sqlDB.ExecContext(ctx, "CREATE TABLE pc_test_lock (id INTEGER NOT NULL, v INTEGER NOT NULL, PRIMARY KEY (id))")
	require.NoError(t, err)
	_, err = fx.sqlDB.ExecContext(ctx, "INSERT INTO pc_test_lock (id, v) VALUES (1, 0)")
	require.NoError(t, err)
	const wait = "UPDATE pc_test_lock SET v = v + 1 WHERE id = 1;\n"
	hold := func() *sql.Tx {
		tx, err := fx.sqlDB.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = tx.ExecContext(ctx, "UPDATE pc_test_lock SET v = v + 1 WHERE id = 1")
		require.NoError(t, err)
		return tx
	}
	lease := func() db.SchedulerLease {
		l, err := fx.store.SchedulerLeaseGet(ctx, migrate.LeaseName)
		require.NoError(t, err)
		return l
	}
	run := func(dir *atlasmigrate.MemDir) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := migrate.Apply(ctx, engine, fx.sqlDB, fx.store, "long", migrate.WithDir(dir), migrate.WithLeaseRenewal(20*time.Millisecond))
			done <- err
		}()
		return done
	}

	// Renewed while the statement waits.
	held := hold()
	dir := migrationDir(t, engine, map[string]string{"20991231000000_long.sql": wait})
	done := run(dir)
	require.Eventually(t, func() bool { l := lease(); return l.OwnerID == "long" }, 30*time.Second, 10*time.Millisecond)
	first := lease()
	require.Eventually(t, func() bool { return lease().LeaseExpiresAt.After(first.LeaseExpiresAt) }, 30*time.Second, 10*time.Millisecond,
		"the lease is renewed while the file's statement runs")
	select {
	case err := <-done:
		t.Fatalf("Apply returned while its statement waited: %v", err)
	default:
	}
	require.Equal(t, first.Fence, lease().Fence, "renewed, not taken over")
	require.NoError(t, held.Commit())
	require.NoError(t, <-done)

	// Taken over while the statement waits: the statement is cancelled and the lease reported lost.
	held = hold()
	defer func() { _ = held.Rollback() }()
	dir = migrationDir(t, engine, map[string]string{"20991231000000_long.sql": wait, "20991231000001_long.sql": wait})
	done = run(dir)
	require.Eventually(t, func() bool { l := lease(); return l.OwnerID == "long" && l.Fence > first.Fence }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, fx.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		l, now, err := q.SchedulerLeaseLock(ctx, migrate.LeaseName)
		if err != nil {
			return err
		}
		l.OwnerID, l.Fence, l.LeaseExpiresAt, l.UpdatedAt = "thief", l.Fence+1, now.Add(time.Hour), now
		return q.SchedulerLeaseUpdate(ctx, l)
	}))
	select {
	case err := <-done:
		require.ErrorContains(t, err, "lost the "+migrate.LeaseName+" lease")
	case <-time.After(60 * time.Second):
		t.Fatal("Apply kept waiting after its lease was taken over")
	}
	require.NoError(t, held.Rollback())
	require.Equal(t, "thief", lease().OwnerID, "the run that lost the lease released nothing of the thief's")
}

// foundationDB is a fresh, empty database with a raw pool (the migration account) and a store on it.
type foundationDB struct {
	url   dburl.URL
	sqlDB *sql.DB
	store db.Store
}

func newFoundationDB(t *testing.T, engine db.Engine) foundationDB {
	t.Helper()
	u := enginetest.ParseURL(t, enginetest.NewDatabase(t, engine))
	return foundationDB{url: u, sqlDB: enginetest.OpenSQLDB(t, u), store: enginetest.OpenStore(t, u)}
}

// migratedFoundationDB is newFoundationDB with the embedded migrations applied (by owner "baseline").
func migratedFoundationDB(t *testing.T, engine db.Engine) foundationDB {
	t.Helper()
	fx := newFoundationDB(t, engine)
	_, err := migrate.Apply(context.Background(), engine, fx.sqlDB, fx.store, "baseline")
	require.NoError(t, err)
	return fx
}

type runResult struct {
	res migrate.Result
	err error
}

// runConcurrently starts n Apply runs at once, each with its own pools, as n processes would.
func runConcurrently(t *testing.T, fx foundationDB, engine db.Engine, n int, opts ...migrate.Option) []runResult {
	t.Helper()
	type conns struct {
		sqlDB *sql.DB
		store db.Store
	}
	cs := make([]conns, n)
	for i := range cs {
		cs[i] = conns{sqlDB: enginetest.OpenSQLDB(t, fx.url), store: enginetest.OpenStore(t, fx.url)}
	}
	results := make([]runResult, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			owner := "run-" + string(rune('a'+i))
			results[i].res, results[i].err = migrate.Apply(context.Background(), engine, cs[i].sqlDB, cs[i].store, owner, opts...)
		}()
	}
	close(start)
	wg.Wait()
	return results
}

func embeddedMigrationsFS(t *testing.T, engine db.Engine) fs.FS {
	t.Helper()
	sub, err := fs.Sub(sqlfiles.Migrations, path.Join("migrations", string(engine)))
	require.NoError(t, err)
	return sub
}

// embeddedMigrationNames lists the embedded migration files of engine in order.
func embeddedMigrationNames(t *testing.T, engine db.Engine) []string {
	t.Helper()
	names, err := fs.Glob(embeddedMigrationsFS(t, engine), "*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	sort.Strings(names)
	return names
}

func embeddedSums(t *testing.T, engine db.Engine) map[string]string {
	t.Helper()
	dir := migrationDir(t, engine, nil)
	sum, err := dir.Checksum()
	require.NoError(t, err)
	m := map[string]string{}
	for _, e := range sum {
		m[e.N] = e.H
	}
	return m
}

// migrationDir is an in-memory copy of the embedded directory of engine plus extra files, rehashed.
func migrationDir(t *testing.T, engine db.Engine, extra map[string]string) *atlasmigrate.MemDir {
	t.Helper()
	dir, err := migrate.DirFS(embeddedMigrationsFS(t, engine))
	require.NoError(t, err)
	for name, content := range extra {
		require.NoError(t, dir.WriteFile(name, []byte(content)))
	}
	if len(extra) > 0 {
		rehash(t, dir)
	}
	return dir
}

// rehash rewrites atlas.sum, as `make migrate-hash` does.
func rehash(t *testing.T, dir atlasmigrate.Dir) {
	t.Helper()
	sum, err := dir.Checksum()
	require.NoError(t, err)
	require.NoError(t, atlasmigrate.WriteSumFile(dir, sum))
}

func versionOf(file string) string {
	v, _, _ := strings.Cut(strings.TrimSuffix(file, ".sql"), "_")
	return v
}

type revisionRow struct {
	version, description, hash, operator string
	typ, applied, total, executionTime   int64
	errText, errStmt, partialHashes      sql.NullString
}

func revisionRows(t *testing.T, engine db.Engine, sqlDB *sql.DB) []revisionRow {
	t.Helper()
	rows, err := sqlDB.QueryContext(context.Background(), `SELECT version, description, type, applied, total,
execution_time, error, error_stmt, hash, partial_hashes, operator_version FROM atlas_schema_revisions ORDER BY version`)
	require.NoError(t, err)
	defer rows.Close()
	var out []revisionRow
	for rows.Next() {
		var r revisionRow
		require.NoError(t, rows.Scan(&r.version, &r.description, &r.typ, &r.applied, &r.total, &r.executionTime,
			&r.errText, &r.errStmt, &r.hash, &r.partialHashes, &r.operator))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

func tableExists(t *testing.T, engine db.Engine, sqlDB *sql.DB, name string) bool {
	t.Helper()
	query := map[db.Engine]string{
		db.EnginePostgres: `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1`,
		db.EngineMySQL:    `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?`,
		db.EngineSQLite:   `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`,
	}[engine]
	var n int
	require.NoError(t, sqlDB.QueryRowContext(context.Background(), query, name).Scan(&n))
	return n > 0
}

// indexExists reports whether the connected schema has an index named name.
func indexExists(t *testing.T, engine db.Engine, sqlDB *sql.DB, name string) bool {
	t.Helper()
	query := map[db.Engine]string{
		db.EnginePostgres: `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1`,
		db.EngineMySQL:    `SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = ?`,
		db.EngineSQLite:   `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`,
	}[engine]
	var n int
	require.NoError(t, sqlDB.QueryRowContext(context.Background(), query, name).Scan(&n))
	return n > 0
}

// catalogQueries list, per engine, the catalog facts the drift test compares: columns (name, position, type,
// nullability, default, collation), indexes and unique keys with column order, and constraints (check names and
// expressions). The revisions table is excluded: it belongs to the migration tool, not to the schema.
var catalogQueries = map[db.Engine][]string{
	db.EnginePostgres: {
		`SELECT 'column', table_name, ordinal_position, column_name, udt_name, character_maximum_length,
		        numeric_precision, datetime_precision, is_nullable, column_default, collation_name
		 FROM information_schema.columns
		 WHERE table_schema = current_schema() AND table_name <> 'atlas_schema_revisions'`,
		`SELECT 'index', t.relname, c.relname, i.indisunique, i.indisprimary,
		        array_to_string(array(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
		                               JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
		                               ORDER BY k.ord), ',')
		 FROM pg_index i
		 JOIN pg_class c ON c.oid = i.indexrelid
		 JOIN pg_class t ON t.oid = i.indrelid
		 JOIN pg_namespace n ON n.oid = t.relnamespace
		 WHERE n.nspname = current_schema() AND t.relname <> 'atlas_schema_revisions'`,
		`SELECT 'constraint', t.relname, c.conname, c.contype, pg_get_constraintdef(c.oid)
		 FROM pg_constraint c
		 JOIN pg_class t ON t.oid = c.conrelid
		 JOIN pg_namespace n ON n.oid = t.relnamespace
		 WHERE n.nspname = current_schema() AND t.relname <> 'atlas_schema_revisions'`,
	},
	db.EngineMySQL: {
		`SELECT 'table', table_name, engine, table_collation
		 FROM information_schema.tables
		 WHERE table_schema = DATABASE() AND table_name <> 'atlas_schema_revisions'`,
		`SELECT 'column', table_name, ordinal_position, column_name, column_type, is_nullable, column_default,
		        character_set_name, collation_name, extra
		 FROM information_schema.columns
		 WHERE table_schema = DATABASE() AND table_name <> 'atlas_schema_revisions'`,
		`SELECT 'index', table_name, index_name, non_unique, seq_in_index, column_name
		 FROM information_schema.statistics
		 WHERE table_schema = DATABASE() AND table_name <> 'atlas_schema_revisions'`,
		`SELECT 'constraint', tc.table_name, tc.constraint_name, tc.constraint_type, cc.check_clause
		 FROM information_schema.table_constraints tc
		 LEFT JOIN information_schema.check_constraints cc
		   ON cc.constraint_schema = tc.constraint_schema AND cc.constraint_name = tc.constraint_name
		 WHERE tc.constraint_schema = DATABASE() AND tc.table_name <> 'atlas_schema_revisions'`,
	},
	db.EngineSQLite: {
		`SELECT 'column', m.name, p.cid, p.name, p.type, p."notnull", p.dflt_value, p.pk
		 FROM sqlite_master m JOIN pragma_table_info(m.name) p
		 WHERE m.type = 'table' AND m.name <> 'atlas_schema_revisions' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'`,
		`SELECT 'index', m.name, il.name, il."unique", il.origin, il.partial, ii.seqno, ii.name
		 FROM sqlite_master m JOIN pragma_index_list(m.name) il JOIN pragma_index_info(il.name) ii
		 WHERE m.type = 'table' AND m.name <> 'atlas_schema_revisions' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'`,
	},
}

// sqliteCheckRE finds named CHECK constraints in SQLite's stored CREATE TABLE text (SQLite has no catalog for them).
var sqliteCheckRE = regexp.MustCompile(`(?is)CONSTRAINT\s+(\w+)\s+CHECK\s*\(`)

// CatalogDump returns a normalised, sorted description of the schema behind sqlDB (one line per column, index
// column and constraint), excluding atlas_schema_revisions. Two databases have the same schema when their dumps are
// equal.
func CatalogDump(t *testing.T, engine db.Engine, sqlDB *sql.DB) []string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	for _, query := range catalogQueries[engine] {
		rows, err := sqlDB.QueryContext(ctx, query)
		require.NoError(t, err, query)
		cols, err := rows.Columns()
		require.NoError(t, err)
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			fields := make([]string, len(vals))
			for i, v := range vals {
				fields[i] = "NULL"
				if v.Valid {
					fields[i] = strings.Join(strings.Fields(v.String), " ")
				}
			}
			lines = append(lines, strings.Join(fields, " | "))
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
	}
	if engine == db.EngineSQLite {
		rows, err := sqlDB.QueryContext(ctx, `SELECT name, sql FROM sqlite_master
			WHERE type = 'table' AND name <> 'atlas_schema_revisions' AND sql IS NOT NULL`)
		require.NoError(t, err)
		for rows.Next() {
			var table, ddl string
			require.NoError(t, rows.Scan(&table, &ddl))
			for _, m := range sqliteCheckRE.FindAllStringSubmatch(ddl, -1) {
				lines = append(lines, "check | "+table+" | "+m[1])
			}
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
	}
	sort.Strings(lines)
	return lines
}
