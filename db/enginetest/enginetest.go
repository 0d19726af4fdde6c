// Package enginetest is test support: it finds the database engines a test run can use and gives each test a fresh,
// isolated, empty (NewDatabase) or migrated (Open) database on them.
//
// Engines: SQLite always (a file in t.TempDir()); PostgreSQL when PC_TEST_POSTGRES_DSN is set (a pgx URL, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable; each database is a fresh schema t_… selected with
// search_path); MySQL/MariaDB/OceanBase when PC_TEST_MYSQL_DSN is set (a go-sql-driver DSN, e.g.
// root@tcp(127.0.0.1:3306)/test; each database is a fresh CREATE DATABASE t_…). An engine named in
// PC_TEST_REQUIRE_ENGINES (comma list of postgres, mysql, sqlite) whose DSN is missing or whose server is unreachable
// fails the test instead of being skipped, so CI cannot pass by silently testing less.
//
// Databases are dropped in t.Cleanup. Their names carry the creation time, so databases leaked by a killed test
// process are swept (dropped) by the next run once they are more than two hours old.
package enginetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dbopen"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/migrate"
	"github.com/powercontext/powercontext/db/mysqlstore"
	"github.com/powercontext/powercontext/db/postgresstore"
)

// Environment variables read by this package.
const (
	EnvPostgresDSN    = "PC_TEST_POSTGRES_DSN"
	EnvMySQLDSN       = "PC_TEST_MYSQL_DSN"
	EnvRequireEngines = "PC_TEST_REQUIRE_ENGINES"
)

// All lists every engine in the order tests run them.
var All = []db.Engine{db.EnginePostgres, db.EngineMySQL, db.EngineSQLite}

// sweepAge is how old a leaked t_<unix>_<hex> database must be before a later run drops it.
const sweepAge = 2 * time.Hour

// Engines returns the engines this test run can use: SQLite always, PostgreSQL and MySQL when their DSN is set and
// the server answers. A required engine (PC_TEST_REQUIRE_ENGINES) that is not available fails t.
func Engines(t testing.TB) []db.Engine {
	t.Helper()
	required := requiredEngines(t)
	var engines []db.Engine
	for _, e := range All {
		if e == db.EngineSQLite {
			engines = append(engines, e)
			continue
		}
		if err := serverFor(e).available(); err != nil {
			if required[e] {
				t.Fatalf("enginetest: %s is required by %s but unavailable: %v", e, EnvRequireEngines, err)
			}
			if serverFor(e).dsn != "" {
				t.Logf("enginetest: skipping %s: %v", e, err)
			}
			continue
		}
		engines = append(engines, e)
	}
	return engines
}

// Run runs fn as one subtest per available engine, named after the engine.
func Run(t *testing.T, fn func(t *testing.T, engine db.Engine)) {
	t.Helper()
	for _, e := range Engines(t) {
		t.Run(string(e), func(t *testing.T) { fn(t, e) })
	}
}

// ForEach runs fn as one subtest per available engine with a fresh migrated store (Open).
func ForEach(t *testing.T, fn func(t *testing.T, s db.Store)) {
	t.Helper()
	Run(t, func(t *testing.T, engine db.Engine) { fn(t, Open(t, engine)) })
}

// NewDatabase creates a fresh, isolated, empty database on engine and returns its URL (the syntax of package
// dburl, which is also Atlas's). It is dropped when the test ends. The test is skipped when the engine is not
// available, and fails when it is required (PC_TEST_REQUIRE_ENGINES).
func NewDatabase(t testing.TB, engine db.Engine) string {
	t.Helper()
	switch engine {
	case db.EngineSQLite:
		return "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "powercontext.db"))
	case db.EnginePostgres, db.EngineMySQL:
	default:
		t.Fatalf("enginetest: unknown engine %q", engine)
	}
	srv := serverFor(engine)
	if err := srv.available(); err != nil {
		if requiredEngines(t)[engine] {
			t.Fatalf("enginetest: %s is required by %s but unavailable: %v", engine, EnvRequireEngines, err)
		}
		t.Skipf("enginetest: %s unavailable: %v", engine, err)
	}
	name := newName(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := srv.admin.ExecContext(ctx, srv.createSQL(name)); err != nil {
		t.Fatalf("enginetest: create %s database %s: %v", engine, name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := srv.admin.ExecContext(ctx, srv.dropSQL(name)); err != nil {
			t.Errorf("enginetest: drop %s database %s: %v", engine, name, err)
		}
	})
	return srv.url(name)
}

// Open creates a fresh database on engine (NewDatabase), applies the migrations, and returns a store on it that is
// closed when the test ends.
func Open(t testing.TB, engine db.Engine) db.Store {
	t.Helper()
	u := ParseURL(t, NewDatabase(t, engine))
	store := OpenStore(t, u)
	migrateDatabase(t, u, store)
	return store
}

// MigratedDatabase creates a fresh database on engine, applies the migrations and returns its parsed URL.
func MigratedDatabase(t testing.TB, engine db.Engine) dburl.URL {
	t.Helper()
	u := ParseURL(t, NewDatabase(t, engine))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := dbopen.Store(ctx, u)
	if err != nil {
		t.Fatalf("enginetest: open %s store: %v", engine, err)
	}
	defer store.Close()
	migrateDatabase(t, u, store)
	return u
}

func migrateDatabase(t testing.TB, u dburl.URL, store db.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sqlDB, err := dbopen.SQLDB(ctx, u)
	if err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	defer sqlDB.Close()
	if _, err := migrate.Apply(ctx, u.Engine, sqlDB, store, "enginetest"); err != nil {
		t.Fatalf("enginetest: migrate %s: %v", u.Engine, err)
	}
}

// OpenStore opens a store on u (dbopen.Store), closed when the test ends. It does not migrate.
func OpenStore(t testing.TB, u dburl.URL) db.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := dbopen.Store(ctx, u)
	if err != nil {
		t.Fatalf("enginetest: open %s store: %v", u.Engine, err)
	}
	t.Cleanup(func() {
		stores.Delete(store)
		_ = store.Close()
	})
	stores.Store(store, u)
	return store
}

// stores maps every store opened by OpenStore (and Open) to its URL, for URLOf.
var stores sync.Map

// URLOf returns the URL of a store opened by Open or OpenStore (to read its tables with OpenSQLDB).
func URLOf(t testing.TB, store db.Store) dburl.URL {
	t.Helper()
	u, ok := stores.Load(store)
	if !ok {
		t.Fatalf("enginetest: store %T was not opened by enginetest", store)
	}
	return u.(dburl.URL)
}

// ParseURL parses a database URL or fails t.
func ParseURL(t testing.TB, raw string) dburl.URL {
	t.Helper()
	u, err := dburl.Parse(raw)
	if err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	return u
}

// OpenSQLDB opens a database/sql pool on u (dbopen.SQLDB), closed when the test ends.
func OpenSQLDB(t testing.TB, u dburl.URL) *sql.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sqlDB, err := dbopen.SQLDB(ctx, u)
	if err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	return sqlDB
}

// requiredEngines parses PC_TEST_REQUIRE_ENGINES.
func requiredEngines(t testing.TB) map[db.Engine]bool {
	t.Helper()
	required := map[db.Engine]bool{}
	for _, name := range strings.Split(os.Getenv(EnvRequireEngines), ",") {
		name = strings.TrimSpace(strings.ToLower(name))
		if name == "" {
			continue
		}
		e := db.Engine(name)
		if !slices.Contains(All, e) {
			t.Fatalf("enginetest: %s names unknown engine %q (want postgres, mysql, sqlite)", EnvRequireEngines, name)
		}
		required[e] = true
	}
	return required
}

// server is one configured PostgreSQL or MySQL server and its shared admin pool.
type server struct {
	engine db.Engine
	env    string
	dsn    string

	once  sync.Once
	admin *sql.DB
	err   error
}

var servers = map[db.Engine]*server{
	db.EnginePostgres: {engine: db.EnginePostgres, env: EnvPostgresDSN},
	db.EngineMySQL:    {engine: db.EngineMySQL, env: EnvMySQLDSN},
}

func serverFor(e db.Engine) *server { return servers[e] }

// available connects once per process and reports why the server cannot be used.
func (s *server) available() error {
	s.once.Do(func() {
		s.dsn = os.Getenv(s.env)
		if s.dsn == "" {
			s.err = fmt.Errorf("%s is not set", s.env)
			return
		}
		if s.engine == db.EngineMySQL {
			if _, err := mysqlstore.URLFromDSN(s.dsn, "test"); err != nil {
				s.err = fmt.Errorf("%s is not a go-sql-driver DSN (e.g. root@tcp(127.0.0.1:3306)/test): %w", s.env, err)
				return
			}
		} else if u, err := url.Parse(s.dsn); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			s.err = fmt.Errorf("%s must be a postgres:// URL (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", s.env)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var admin *sql.DB
		var err error
		if s.engine == db.EngineMySQL {
			admin, err = mysqlstore.OpenDB(ctx, s.dsn)
		} else {
			admin, err = postgresstore.OpenDB(ctx, s.dsn)
		}
		if err != nil {
			s.err = fmt.Errorf("%s: %w", s.env, err)
			return
		}
		admin.SetMaxOpenConns(8)
		s.admin = admin
		s.sweep(ctx)
	})
	return s.err
}

func (s *server) createSQL(name string) string {
	if s.engine == db.EngineMySQL {
		return "CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
	}
	return `CREATE SCHEMA "` + name + `"`
}

func (s *server) dropSQL(name string) string {
	if s.engine == db.EngineMySQL {
		return "DROP DATABASE IF EXISTS `" + name + "`"
	}
	return `DROP SCHEMA IF EXISTS "` + name + `" CASCADE`
}

// url is the dburl URL of database (schema) name on the server.
func (s *server) url(name string) string {
	if s.engine == db.EnginePostgres {
		u, _ := url.Parse(s.dsn) // validated in available
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		return u.String()
	}
	u, _ := mysqlstore.URLFromDSN(s.dsn, name) // validated in available
	return u
}

// sweep drops test databases left behind by killed test processes.
func (s *server) sweep(ctx context.Context) {
	query := `SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 't\_%'`
	rows, err := s.admin.QueryContext(ctx, query)
	if err != nil {
		return
	}
	var stale []string
	for rows.Next() {
		var name string
		if rows.Scan(&name) == nil && isStale(name, time.Now()) {
			stale = append(stale, name)
		}
	}
	_ = rows.Close()
	for _, name := range stale {
		_, _ = s.admin.ExecContext(ctx, s.dropSQL(name))
	}
}

var nameRE = regexp.MustCompile(`^t_([0-9]{10})_[0-9a-f]{10}$`)

// newName returns t_<unix seconds>_<10 random hex digits>: unique across parallel tests and processes, a valid
// unquoted identifier on both servers, and datable by sweep.
func newName(now time.Time) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return fmt.Sprintf("t_%010d_%s", now.Unix(), hex.EncodeToString(b))
}

func isStale(name string, now time.Time) bool {
	m := nameRE.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	sec, err := strconv.ParseInt(m[1], 10, 64)
	return err == nil && now.Sub(time.Unix(sec, 0)) > sweepAge
}
