package sqlreview

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

func TestParseQueryFile(t *testing.T) {
	src := `-- A file comment, separated by a blank line.

-- Lock: the lane row.
-- Second line.
-- name: WorkLaneLock :one
SELECT * FROM pc_work_lanes l
WHERE l.lane_key = sqlc.arg('lane_key') FOR UPDATE;

-- name: WorkLaneGet :one
SELECT * FROM pc_work_lanes WHERE lane_key = ?;
`
	qs, err := parseQueryFile("work_lane.sql", src)
	require.NoError(t, err)
	require.Len(t, qs, 2)
	require.Equal(t, "WorkLaneLock", qs[0].Name)
	require.Equal(t, ":one", qs[0].Cmd)
	require.Equal(t, "Lock: the lane row.\nSecond line.", qs[0].Comment)
	require.Equal(t, "SELECT * FROM pc_work_lanes l\nWHERE l.lane_key = sqlc.arg('lane_key') FOR UPDATE;", qs[0].SQL)
	require.Empty(t, qs[1].Comment)

	_, err = parseQueryFile("x.sql", "-- name: Broken :one\nSELECT 1\n")
	require.Error(t, err)
}

func TestRewrite(t *testing.T) {
	q := "SELECT sqlc.embed(i) FROM pc_work_items i WHERE i.work_id = sqlc.arg('work_id') AND i.kind IN (sqlc.slice('kinds')) " +
		"AND i.lane_key = ? AND i.scope_id = sqlc.narg('scope_id') AND i.work_id <> sqlc.arg('work_id') LIMIT ?"
	pg, params := Rewrite(db.EnginePostgres, q)
	require.Equal(t, "SELECT i.* FROM pc_work_items i WHERE i.work_id = $1 AND i.kind IN ($2) AND i.lane_key = ? "+
		"AND i.scope_id = $3 AND i.work_id <> $1 LIMIT ?", pg)
	require.Equal(t, []Param{{"work_id"}, {"kinds"}, {"scope_id"}}, params)

	my, params := Rewrite(db.EngineMySQL, q)
	require.Equal(t, "SELECT i.* FROM pc_work_items i WHERE i.work_id = ? AND i.kind IN (?) AND i.lane_key = ? "+
		"AND i.scope_id = ? AND i.work_id <> ? LIMIT ?", my)
	require.Equal(t, []Param{{"work_id"}, {"kinds"}, {"lane_key"}, {"scope_id"}, {"work_id"}, {"limit"}}, params)
}

func TestAliases(t *testing.T) {
	a := Aliases("SELECT * FROM pc_work_items i JOIN pc_work_lanes AS l ON l.lane_key = i.lane_key WHERE EXISTS (SELECT 1 FROM pc_work_keys WHERE x)")
	require.Equal(t, map[string]string{"pc_work_items": "pc_work_items", "i": "pc_work_items", "pc_work_lanes": "pc_work_lanes",
		"l": "pc_work_lanes", "pc_work_keys": "pc_work_keys"}, a)
}

func TestShapesCompare(t *testing.T) {
	rs := []Reviewed{
		{Query: Query{File: "work_item.sql", Name: "A", Cmd: ":one", SQL: "SELECT 1;"},
			Plan: Plan{Lines: []string{"x"}, Access: map[string][]string{"pc_work_items": {"index"}}}},
		{Query: Query{File: "work_item.sql", Name: "B", Cmd: ":many", SQL: "SELECT 2;"},
			Plan: Plan{Lines: []string{"y"}, Access: map[string][]string{"pc_work_items": {"scan"}}, Flags: []string{"sort", "sort"}}},
	}
	committed := Shapes(Render(db.EngineSQLite, rs))
	require.Equal(t, map[string]string{"A": "pc_work_items=index", "B": "pc_work_items=scan; sort"}, committed)
	require.Equal(t, []string{"B (work_item.sql): full scan of pc_work_items"}, Findings(db.EngineSQLite, rs))

	rs[0].Plan.Access["pc_work_items"] = []string{"scan"}
	require.Equal(t, []string{`A: shape "pc_work_items=scan", committed "pc_work_items=index"`},
		CompareShapes(committed, Shapes(Render(db.EngineSQLite, rs))))
	require.Equal(t, []string{`A: shape "pc_work_items=scan", committed "pc_work_items=index"`, "B: no longer in the query files"},
		CompareShapes(committed, Shapes(Render(db.EngineSQLite, rs[:1]))))
}
