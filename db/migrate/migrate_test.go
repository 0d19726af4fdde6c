package migrate

import (
	"strings"
	"testing"

	"ariga.io/atlas/sql/migrate"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

func testDir(t *testing.T, files ...string) (*migrate.MemDir, []migrate.File, migrate.HashFile) {
	t.Helper()
	d := &migrate.MemDir{}
	for _, f := range files {
		require.NoError(t, d.WriteFile(f, []byte("CREATE TABLE t_"+f[:14]+" (id INT);\n")))
	}
	sum, err := d.Checksum()
	require.NoError(t, err)
	require.NoError(t, migrate.WriteSumFile(d, sum))
	fs, err := d.Files()
	require.NoError(t, err)
	return d, fs, sum
}

func names(files []migrate.File) []string {
	out := []string{}
	for _, f := range files {
		out = append(out, f.Name())
	}
	return out
}

func TestPlan(t *testing.T) {
	_, files, sum := testDir(t, "20260101000000_a.sql", "20260102000000_b.sql", "20260103000000_c.sql")
	h := func(name string) string { s, _ := sum.SumByName(name); return s }
	done := func(v, d string) Revision {
		return Revision{Version: v, Description: d, Type: revisionTypeExecute, Applied: 1, Total: 1, Hash: h(v + "_" + d + ".sql")}
	}

	p, err := plan(files, sum, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"20260101000000_a.sql", "20260102000000_b.sql", "20260103000000_c.sql"}, names(p.pending))

	p, err = plan(files, sum, []Revision{done("20260101000000", "a")})
	require.NoError(t, err)
	require.Equal(t, []string{"20260102000000_b.sql", "20260103000000_c.sql"}, names(p.pending))
	require.Nil(t, p.resume)

	partial := done("20260102000000", "b")
	partial.Applied, partial.Total = 1, 3
	p, err = plan(files, sum, []Revision{done("20260101000000", "a"), partial})
	require.NoError(t, err)
	require.Equal(t, []string{"20260102000000_b.sql", "20260103000000_c.sql"}, names(p.pending))
	require.NotNil(t, p.resume)
	require.Equal(t, "20260102000000", p.resume.Version)

	// A baseline revision (no hash, no statements) counts as applied.
	p, err = plan(files, sum, []Revision{{Version: "20260102000000", Description: "b", Type: revisionTypeBaseline}})
	require.NoError(t, err)
	require.Equal(t, []string{"20260103000000_c.sql"}, names(p.pending))

	// b was never applied but c was: out of order.
	_, err = plan(files, sum, []Revision{done("20260101000000", "a"), done("20260103000000", "c")})
	var nerr *NonLinearError
	require.ErrorAs(t, err, &nerr)
	require.Equal(t, []string{"20260102000000_b.sql"}, nerr.Files)

	// An applied revision without a file: the database is ahead.
	p, err = plan(files, sum, []Revision{done("20260101000000", "a"), done("20260102000000", "b"),
		done("20260103000000", "c"), {Version: "20260104000000", Description: "d", Applied: 1, Total: 1, Hash: "x"}})
	require.NoError(t, err)
	require.Equal(t, []string{"20260104000000_d.sql"}, p.unknown)
	require.Empty(t, p.pending)

	// A complete revision whose hash differs from the file's: the file was edited after it was applied.
	edited := done("20260101000000", "a")
	edited.Hash = "other"
	_, err = plan(files, sum, []Revision{edited})
	var herr *HistoryChangedError
	require.ErrorAs(t, err, &herr)
	require.Equal(t, "20260101000000_a.sql", herr.File)
}

func TestRebind(t *testing.T) {
	require.Equal(t, "a = $1 AND b = $2", revisions{engine: db.EnginePostgres}.rebind("a = ? AND b = ?"))
	require.Equal(t, "a = ? AND b = ?", revisions{engine: db.EngineMySQL}.rebind("a = ? AND b = ?"))
}

func TestEmbeddedDirs(t *testing.T) {
	var versions []string
	for _, e := range []db.Engine{db.EnginePostgres, db.EngineMySQL, db.EngineSQLite} {
		d, err := Dir(e)
		require.NoError(t, err)
		require.NoError(t, Validate(d))
		files, err := d.Files()
		require.NoError(t, err)
		require.NotEmpty(t, files)
		require.Equal(t, leaseTableVersion, files[0].Version(), "the first migration creates the lease table")
		stmts, err := files[0].StmtDecls()
		require.NoError(t, err)
		found := false
		for _, s := range stmts {
			if strings.Contains(strings.ToLower(s.Text), "create table pc_scheduler_leases") {
				found = true
			}
		}
		require.True(t, found, "%s baseline creates pc_scheduler_leases", e)
		if versions == nil {
			versions = names(files)
		}
		require.Equal(t, versions, names(files))
	}
	_, err := Dir("oracle")
	require.Error(t, err)
}

func TestStatementErrorMessages(t *testing.T) {
	e := &StatementError{File: "1_x.sql", Statement: 2, Total: 3, Text: "CREATE TABLE\n  x (id INT);", Err: errString("boom")}
	require.Contains(t, e.Error(), "statement 2 of 3 failed (CREATE TABLE x (id INT);): boom; the file was rolled back")
	e.Partial = true
	require.Contains(t, e.Error(), "1 statements stay applied")
	require.Contains(t, e.Error(), "resumes at statement 2")
}

type errString string

func (e errString) Error() string { return string(e) }

// TestCommentOnlyRewriteIsAccepted: a database that applied the baseline before its comments stopped citing a
// document outside the repository keeps working (same statements, older hash), while any other hash is still
// reported as edited history.
func TestCommentOnlyRewriteIsAccepted(t *testing.T) {
	for _, e := range []db.Engine{db.EnginePostgres, db.EngineMySQL} {
		d, err := Dir(e)
		require.NoError(t, err)
		files, err := d.Files()
		require.NoError(t, err)
		sum, err := d.Checksum()
		require.NoError(t, err)
		base := files[0]
		require.Equal(t, "20261202000000_baseline.sql", base.Name())
		current, err := sum.SumByName(base.Name())
		require.NoError(t, err)
		rev := func(hash string) []Revision {
			return []Revision{{Version: base.Version(), Description: base.Desc(), Type: revisionTypeExecute, Applied: 1, Total: 1, Hash: hash}}
		}
		_, err = plan(files, sum, rev(current))
		require.NoError(t, err, "%s: the current copy", e)
		accepted := 0
		for _, old := range commentOnlyRewrites[base.Name()] {
			if _, err := plan(files, sum, rev(old)); err == nil {
				accepted++
			}
		}
		require.Equal(t, len(commentOnlyRewrites[base.Name()]), accepted, "%s: every listed earlier copy is accepted", e)
		_, err = plan(files, sum, rev("h1:not-a-known-copy="))
		var herr *HistoryChangedError
		require.ErrorAs(t, err, &herr, "%s: an unknown hash is still edited history", e)
	}
}
