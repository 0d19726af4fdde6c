package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// profileStatements (-statements) makes the database/sql counter (MariaDB, SQLite) also record, per statement, how
// often it ran and how long the driver call took on the client (sent, executed, first answer read): the profile of
// where a ledger run's round trips and waits go, printed with the B1 summary.
var profileStatements bool

// stmtStats is the per-statement record of one counter.
type stmtStats struct {
	m sync.Map // statement name -> *stmtStat
}

type stmtStat struct{ n, ns atomic.Int64 }

func (s *stmtStats) record(query string, d time.Duration) {
	v, _ := s.m.LoadOrStore(statementName(query), &stmtStat{})
	st := v.(*stmtStat)
	st.n.Add(1)
	st.ns.Add(int64(d))
}

// statementName is the sqlc query name of a generated statement (its "-- name: X :kind" line), else the statement's
// first word (COMMIT, ROLLBACK, SAVEPOINT …).
func statementName(query string) string {
	q := strings.TrimSpace(query)
	if rest, ok := strings.CutPrefix(q, "-- name: "); ok {
		if name, _, ok := strings.Cut(rest, " "); ok {
			return name
		}
	}
	word, _, _ := strings.Cut(q, " ")
	return strings.ToUpper(word)
}

// summary lists the statements by total client time, each as "name count/item avg".
func (s *stmtStats) summary(items int) string {
	type row struct {
		name  string
		n, ns int64
	}
	var rows []row
	var total int64
	s.m.Range(func(k, v any) bool {
		st := v.(*stmtStat)
		rows = append(rows, row{k.(string), st.n.Load(), st.ns.Load()})
		total += st.ns.Load()
		return true
	})
	sort.Slice(rows, func(i, j int) bool { return rows[i].ns > rows[j].ns })
	parts := make([]string, 0, len(rows))
	for _, r := range rows {
		parts = append(parts, fmt.Sprintf("%s %.2f/item %.0f µs avg %.0f%%", r.name, float64(r.n)/float64(items),
			float64(r.ns)/float64(r.n)/1e3, 100*float64(r.ns)/float64(max(total, 1))))
	}
	return strings.Join(parts, "; ")
}
