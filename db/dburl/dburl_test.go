package dburl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		raw      string
		engine   db.Engine
		dsn      string
		redacted string
	}{
		{"sqlite default", dburl.DefaultURL, db.EngineSQLite, "./data/powercontext.db", dburl.DefaultURL},
		{"sqlite relative", "sqlite://data/pc.db", db.EngineSQLite, "data/pc.db", "sqlite://data/pc.db"},
		{"sqlite absolute", "sqlite:///var/lib/pc/pc.db", db.EngineSQLite, "/var/lib/pc/pc.db", "sqlite:///var/lib/pc/pc.db"},
		{"sqlite empty query", "sqlite://pc.db?", db.EngineSQLite, "pc.db", "sqlite://pc.db?"},
		{
			"postgres", "postgres://pc:s3cret@db.internal:5432/pc?sslmode=disable",
			db.EnginePostgres, "postgres://pc:s3cret@db.internal:5432/pc?sslmode=disable",
			"postgres://pc:xxxxx@db.internal:5432/pc?sslmode=disable",
		},
		{
			"postgresql alias with search_path", "postgresql://pc@127.0.0.1/pc?search_path=app&sslmode=disable",
			db.EnginePostgres, "postgresql://pc@127.0.0.1/pc?search_path=app&sslmode=disable",
			"postgresql://pc@127.0.0.1/pc?search_path=app&sslmode=disable",
		},
		{
			"postgres password parameter", "postgres://pc@127.0.0.1/pc?password=s3cret",
			db.EnginePostgres, "postgres://pc@127.0.0.1/pc?password=s3cret",
			"postgres://pc@127.0.0.1/pc?password=xxxxx",
		},
		{
			"mysql", "mysql://pc:s3cret@db.internal:3307/pc",
			db.EngineMySQL, "pc:s3cret@tcp(db.internal:3307)/pc", "mysql://pc:xxxxx@db.internal:3307/pc",
		},
		{
			"mysql default port and params", "mysql://root@127.0.0.1/test?parseTime=true&timeout=5s",
			db.EngineMySQL, "root@tcp(127.0.0.1:3306)/test?parseTime=true&timeout=5s", "mysql://root@127.0.0.1/test?parseTime=true&timeout=5s",
		},
		{
			"mysql percent-encoded password", "mysql://pc:p%40ss%3Aw%2Frd@127.0.0.1:3306/pc",
			db.EngineMySQL, "pc:p@ss:w/rd@tcp(127.0.0.1:3306)/pc", "mysql://pc:xxxxx@127.0.0.1:3306/pc",
		},
		{
			"mysql ipv6", "mysql://root@[::1]:3306/test",
			db.EngineMySQL, "root@tcp([::1]:3306)/test", "mysql://root@[::1]:3306/test",
		},
		{
			"oceanbase alias with tenant user", "oceanbase://pc%40tenant%23cluster:pw@ob.internal:2881/pc",
			db.EngineMySQL, "pc@tenant#cluster:pw@tcp(ob.internal:2881)/pc", "oceanbase://pc%40tenant%23cluster:xxxxx@ob.internal:2881/pc",
		},
		{
			"scheme is case-insensitive", "MySQL://root@127.0.0.1/test",
			db.EngineMySQL, "root@tcp(127.0.0.1:3306)/test", "mysql://root@127.0.0.1/test",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, err := dburl.Parse(tc.raw)
			require.NoError(t, err)
			require.Equal(t, tc.engine, u.Engine)
			require.Equal(t, tc.dsn, u.DSN)
			require.Equal(t, tc.redacted, u.Redacted)
			require.Equal(t, tc.redacted, u.String())
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		raw     string
		wantMsg string
	}{
		{"empty", "", "database URL is empty"},
		{"blank", "  ", "database URL is empty"},
		{"no scheme", "root:s3cret@tcp(127.0.0.1)/test", "has no scheme"},
		{"unknown scheme", "sqlserver://sa:s3cret@host/db", `scheme "sqlserver" is not supported`},
		{"sqlite without path", "sqlite://", "has no file path"},
		{"sqlite with params", "sqlite://pc.db?mode=memory", "takes no query parameters"},
		{"mysql without host", "mysql://root:s3cret@/test", "has no host"},
		{"mysql without database", "mysql://root:s3cret@127.0.0.1:3306", "must name exactly one database"},
		{"mysql with slash database", "mysql://root:s3cret@127.0.0.1:3306/a/b", "must name exactly one database"},
		{"mysql bad param", "mysql://root:s3cret@127.0.0.1/test?parseTime=maybe", "invalid query parameters"},
		{"postgres bad port", "postgres://pc:s3cret@127.0.0.1:notaport/pc", "not a valid URL"},
		{"postgres bad param", "postgres://pc:s3cret@127.0.0.1/pc?sslmode=sometimes", "postgres database URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := dburl.Parse(tc.raw)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.wantMsg)
			require.NotContains(t, err.Error(), "s3cret", "errors must never contain the password")
		})
	}
}
