package sqlreview

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/powercontext/powercontext/db"
)

// The ledger's locks per statement: for the statements of the work_* query files that write or lock rows, what the
// transaction holds right after running the statement, read while the transaction is still open.
//
//   - PostgreSQL: the table-level locks of pg_locks for the session (relation and lock mode). The statement is
//     prepared and explained inside the transaction, which takes the same relation locks as running it (parse and
//     planning lock every relation in the statement's mode) without needing valid parameter values. Row locks live
//     in the rows, not in pg_locks.
//   - MariaDB/MySQL: the statement runs with the representative parameters in a READ COMMITTED transaction (the
//     service's level), then SHOW ENGINE INNODB STATUS gives the row locks and lock structures (one per table
//     intention lock and per locked page) its transaction holds. Rolled back.
//   - SQLite: none per table; a write transaction holds the database's write lock (BEGIN IMMEDIATE).

var lockingStatement = regexp.MustCompile(`(?is)\b(INSERT|UPDATE|DELETE|REPLACE)\b|\bFOR\s+(UPDATE|SHARE|NO KEY UPDATE)\b|\bLOCK\s+IN\s+SHARE\s+MODE\b`)

// LedgerLocking reports whether q is a ledger statement that writes or locks rows.
func LedgerLocking(q Query) bool {
	return strings.HasPrefix(q.File, "work_") && lockingStatement.MatchString(q.SQL)
}

// Locks returns what q's transaction holds right after the statement (see above), or why it could not be read.
func (e *Explainer) Locks(ctx context.Context, q Query) (string, error) {
	text, params := Rewrite(e.engine, strings.TrimSuffix(strings.TrimSpace(q.SQL), ";"))
	switch e.engine {
	case db.EnginePostgres:
		return e.locksPostgres(ctx, text, len(params))
	case db.EngineMySQL:
		args := Values(e.engine, q.Name, params, e.types)
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(text)), "INSERT") {
			for i, p := range params {
				if v, ok := freshInsertValues[p.Hint]; ok {
					args[i] = v
				}
			}
		}
		return e.locksMySQL(ctx, text, args)
	}
	return "", nil
}

func (e *Explainer) locksPostgres(ctx context.Context, text string, nParams int) (out string, err error) {
	if _, err := e.conn.ExecContext(ctx, "BEGIN ISOLATION LEVEL READ COMMITTED"); err != nil {
		return "", err
	}
	defer func() {
		if _, rerr := e.conn.ExecContext(ctx, "ROLLBACK"); rerr != nil && err == nil {
			err = rerr
		}
		_, _ = e.conn.ExecContext(ctx, "DEALLOCATE pc_locks")
	}()
	if _, err := e.conn.ExecContext(ctx, "PREPARE pc_locks AS "+text); err != nil {
		return "not read: " + firstLine(err.Error()), nil
	}
	exec := "EXPLAIN (COSTS OFF) EXECUTE pc_locks"
	if nParams > 0 {
		exec += "(" + strings.TrimSuffix(strings.Repeat("NULL, ", nParams), ", ") + ")"
	}
	rows, err := e.conn.QueryContext(ctx, exec)
	if err != nil {
		return "not read: " + firstLine(err.Error()), nil
	}
	if err := rows.Close(); err != nil {
		return "", err
	}
	rows, err = e.conn.QueryContext(ctx, `SELECT c.relname, l.mode
		FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
		WHERE l.pid = pg_backend_pid() AND c.relkind IN ('r', 'p') AND c.relname LIKE 'pc\_%'
		ORDER BY c.relname, l.mode`)
	if err != nil {
		return "", err
	}
	defer func() { _ = rows.Close() }()
	var locks []string
	for rows.Next() {
		var rel, mode string
		if err := rows.Scan(&rel, &mode); err != nil {
			return "", err
		}
		locks = append(locks, rel+" "+mode)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(locks) == 0 {
		return "none", nil
	}
	return strings.Join(locks, ", "), nil
}

func (e *Explainer) locksMySQL(ctx context.Context, text string, args []any) (out string, err error) {
	if _, err := e.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return "", err
	}
	defer func() {
		if _, rerr := e.conn.ExecContext(ctx, "ROLLBACK"); rerr != nil && err == nil {
			err = rerr
		}
	}()
	rows, err := e.conn.QueryContext(ctx, text, args...)
	if err != nil {
		return "not read: " + firstLine(err.Error()), nil
	}
	// Drain the result set so that the statement completes.
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		return "not read: " + firstLine(err.Error()), nil
	}
	// SHOW ENGINE INNODB STATUS is built when asked; information_schema.INNODB_TRX is a cache refreshed at most every
	// 100 ms, which lags behind statements run back to back.
	var connID int64
	if err := e.conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&connID); err != nil {
		return "", err
	}
	var typ, name, status string
	if err := e.conn.QueryRowContext(ctx, "SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
		return "not read: " + firstLine(err.Error()), nil
	}
	for _, block := range strings.Split(status, "---TRANSACTION ") {
		m := threadID.FindStringSubmatch(block)
		if m == nil || m[1] != strconv.FormatInt(connID, 10) {
			continue
		}
		if c := lockCounts.FindStringSubmatch(block); c != nil {
			return fmt.Sprintf("%s row lock(s) in %s lock structure(s)", c[2], c[1]), nil
		}
		return "none (the transaction holds no locks)", nil
	}
	return "none (no InnoDB transaction started)", nil
}

var (
	threadID   = regexp.MustCompile(`(?:MySQL|MariaDB) thread id (\d+)`)
	lockCounts = regexp.MustCompile(`(\d+) lock struct\(s\), heap size \d+, (\d+) row lock\(s\)`)
)
