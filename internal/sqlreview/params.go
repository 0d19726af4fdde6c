package sqlreview

import (
	"bufio"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/powercontext/powercontext/db"
	sqlfiles "github.com/powercontext/powercontext/sql"
)

// Representative parameters for MySQL and SQLite (PostgreSQL is explained as a generic plan, without values): a
// value that points at a seeded row for the key columns (so a MySQL primary-key lookup does not end the plan as an
// "Impossible WHERE"), a small row limit, a time inside the seeded range, and otherwise a value of the column's type.

// seedTime is after every seeded timestamp (one second apart from 2026-01-01 00:00, at most 10⁵ of them: 27.8
// hours), so every seeded item is due, and before the running items' lease expiry (2026-01-03 00:00).
var seedTime = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)

var keyValues = map[string]any{
	"work_id": seedWorkID, "work_ids": seedWorkID, "logical_key": seedLogicalKey, "scope_id": seedScope,
	"source_id": seedSourceID, "kind": seedKind, "kinds": seedKind, "lease_owner": seedOwner, "owner_id": seedOwner,
	"owner": seedOwner, "model": seedModel, "status": "queued", "outcome": "succeeded",
}

// freshInsertValues replaces key values in an INSERT run for its locks (locks.go), so that it adds a row instead of
// failing on a duplicate key.
var freshInsertValues = map[string]any{
	"work_id": "00000000-0000-4000-8000-999999999999", "logical_key": "key-new", "lane_sequence": 11, "attempt_no": 2,
}

// queryValues replaces key values for the queries whose guard matches no row of the running head (keyValues): the
// values of one seeded row that the guard matches, so that the plan and the lock line show the statement's real work.
var queryValues = map[string]map[string]any{
	// The batch finish's key DELETE: the first succeeded item of lane 1, its key and the version it had before it
	// succeeded (its state_version is that + 1).
	"WorkKeyDeleteMany": {"logical_keys": seedSucceededKey, "work_ids": seedSucceededWorkID,
		"versions": `{"` + seedSucceededWorkID + `": ` + strconv.Itoa(seedSucceededVersion-1) + `}`},
	// The candidate keysets: a page after the nil id (every candidate of the scope follows it), in a status the
	// seeded candidates have.
	"ExperienceCandidateListByScopeAfter":  {"after_candidate_id": db.NilUUID},
	"ExperienceCandidateListByStatusAfter": {"after_candidate_id": db.NilUUID, "status": "approved"},
}

var limitNames = map[string]bool{"limit": true, "max_rows": true, "candidates": true, "slots": true, "batch": true, "batch_size": true}

var columnDef = regexp.MustCompile(`^\s+([a-z_][a-z0-9_]*)\s+([A-Za-z]+)`)

// columnTypes reads the column types of engine's desired schema (name → lower-case type; the first table wins).
func columnTypes(engine db.Engine) (map[string]string, error) {
	src, err := fs.ReadFile(sqlfiles.Schema, path.Join("schema", engineDir(engine), "schema.sql"))
	if err != nil {
		return nil, err
	}
	types := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(src)))
	for sc.Scan() {
		if m := columnDef.FindStringSubmatch(sc.Text()); m != nil && m[1] != "constraint" {
			if _, ok := types[m[1]]; !ok {
				types[m[1]] = strings.ToLower(m[2])
			}
		}
	}
	return types, sc.Err()
}

// Values returns representative arguments for the params of query on engine (MySQL or SQLite).
func Values(engine db.Engine, query string, params []Param, types map[string]string) []any {
	out := make([]any, len(params))
	for i, p := range params {
		if v, ok := queryValues[query][p.Hint]; ok {
			out[i] = v
			continue
		}
		out[i] = value(engine, p.Hint, types)
	}
	return out
}

func value(engine db.Engine, hint string, types map[string]string) any {
	if hint == "kinds_json" {
		return `["` + seedKind + `"]`
	}
	if hint == "lane_key" || hint == "lane_keys" {
		return seedLane
	}
	if v, ok := keyValues[hint]; ok {
		return v
	}
	if limitNames[hint] || strings.HasPrefix(hint, "limit") || strings.HasPrefix(hint, "max_") {
		return 10
	}
	typ := types[hint]
	isTime := strings.HasSuffix(hint, "_at") || strings.Contains(hint, "cutoff") || hint == "now" ||
		typ == "timestamptz" || typ == "datetime" || typ == "timestamp"
	switch {
	case isTime && engine == db.EngineSQLite:
		return seedTime.UnixMicro()
	case isTime:
		return seedTime
	case typ == "blob" || typ == "mediumblob" || typ == "bytea" || typ == "longblob":
		return []byte("{}")
	case typ == "boolean" || typ == "bool":
		return false
	case strings.Contains(typ, "int"):
		return 1
	}
	return "1"
}
