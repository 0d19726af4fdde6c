package enginetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

func TestEnginesAlwaysIncludesSQLite(t *testing.T) {
	require.Contains(t, Engines(t), db.EngineSQLite)
}

func TestNewDatabaseIsFreshAndIsolated(t *testing.T) {
	Run(t, func(t *testing.T, engine db.Engine) {
		t.Parallel()
		a, b := NewDatabase(t, engine), NewDatabase(t, engine)
		require.NotEqual(t, a, b)
		for _, raw := range []string{a, b} {
			u := ParseURL(t, raw)
			require.Equal(t, engine, u.Engine)
			sqlDB := OpenSQLDB(t, u)
			var n int
			require.NoError(t, sqlDB.QueryRowContext(context.Background(), map[db.Engine]string{
				db.EnginePostgres: `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`,
				db.EngineMySQL:    `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()`,
				db.EngineSQLite:   `SELECT count(*) FROM sqlite_master`,
			}[engine]).Scan(&n))
			require.Zero(t, n, "a new database is empty")
		}
	})
}

func TestOpenMigrates(t *testing.T) {
	ForEach(t, func(t *testing.T, s db.Store) {
		now, err := s.DBNow(context.Background())
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), now, time.Minute)
	})
}

func TestNames(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	name := newName(now)
	require.Regexp(t, nameRE, name)
	require.NotEqual(t, name, newName(now))
	require.False(t, isStale(name, now.Add(time.Hour)))
	require.True(t, isStale(name, now.Add(3*time.Hour)))
	require.False(t, isStale("t_other", now.Add(100*time.Hour)))
}

// BenchmarkOpen measures what every store test pays for its fresh migrated database.
func BenchmarkOpen(b *testing.B) {
	for _, e := range Engines(b) {
		b.Run(string(e), func(b *testing.B) {
			for b.Loop() {
				Open(b, e)
			}
		})
	}
}
