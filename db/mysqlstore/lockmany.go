package mysqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

// lockMany runs a batch lock's three locking reads (lanes, then logical keys, then items, each ascending: the lock
// order across the batch). Where the pool sends multi-statements (atCommit is set: MariaDB and MySQL 8, parameters
// interpolated by the driver) the three go as one multi-statement, so the batch lock costs one round trip instead of
// three: the server runs them in order, and the first failing one ends it. Elsewhere they run one by one.
func (q queries) lockMany(ctx context.Context, laneKeys, logicalKeys, workIDs []string) (
	[]mysqlgen.WorkLaneLockManyRow, []mysqlgen.PcWorkKey, []mysqlgen.WorkItemLockManyRow, error) {
	if q.atCommit == nil {
		lanes, err := q.q.WorkLaneLockMany(ctx, laneKeys)
		if err != nil {
			return nil, nil, nil, err
		}
		keys, err := q.q.WorkKeyLockMany(ctx, logicalKeys)
		if err != nil {
			return nil, nil, nil, err
		}
		items, err := q.q.WorkItemLockMany(ctx, workIDs)
		return lanes, keys, items, err
	}
	// sqlc's statements, with their IN lists expanded, recorded rather than run.
	var rec queryRecorder
	g := mysqlgen.New(&rec)
	_, _ = g.WorkLaneLockMany(ctx, laneKeys)
	_, _ = g.WorkKeyLockMany(ctx, logicalKeys)
	_, _ = g.WorkItemLockMany(ctx, workIDs)
	if len(rec.query) != 3 {
		return nil, nil, nil, fmt.Errorf("mysqlstore: recorded %d of the batch lock's 3 statements", len(rec.query))
	}
	rows, err := q.tx.QueryContext(ctx, strings.Join(rec.query, ";\n"), rec.args...)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	lanes, err := scanSet[mysqlgen.WorkLaneLockManyRow](rows, true)
	if err != nil {
		return nil, nil, nil, err
	}
	keys, err := scanSet[mysqlgen.PcWorkKey](rows, true)
	if err != nil {
		return nil, nil, nil, err
	}
	items, err := scanSet[mysqlgen.WorkItemLockManyRow](rows, false)
	if err != nil {
		return nil, nil, nil, err
	}
	return lanes, keys, items, rows.Close()
}

// scanSet reads the current result set of a multi-statement into rows of T, whose fields are the statement's
// columns in order (sqlc's row types; an embedded table struct stands for its columns), and with more moves to the
// next result set, which must exist.
func scanSet[T any](rows *sql.Rows, more bool) ([]T, error) {
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(columnsOf(reflect.ValueOf(&v).Elem(), nil)...); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if more && !rows.NextResultSet() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("mysqlstore: a multi-statement returned fewer result sets than it has statements")
	}
	return out, nil
}

// genPkg is the package path of sqlc's MySQL code, whose table structs columnsOf expands.
var genPkg = reflect.TypeOf(mysqlgen.PcWorkKey{}).PkgPath()

// columnsOf appends a scan destination for each column a sqlc row value stands for: its fields in order, a field
// whose type is one of sqlc's table structs (sqlc.embed) expanded into its own fields.
func columnsOf(v reflect.Value, dest []any) []any {
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Struct && f.Type().PkgPath() == genPkg {
			dest = columnsOf(f, dest)
			continue
		}
		dest = append(dest, f.Addr().Interface())
	}
	return dest
}

// queryRecorder is a mysqlgen.DBTX that records each query (with sqlc's IN lists expanded) and its arguments
// instead of running it; the generated method then returns errRecorded, which the caller ignores.
type queryRecorder struct {
	query []string
	args  []any
}

var errRecorded = errors.New("mysqlstore: statement recorded, not run")

func (r *queryRecorder) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	r.query = append(r.query, strings.TrimRight(strings.TrimSpace(query), ";"))
	r.args = append(r.args, args...)
	return nil, errRecorded
}

func (r *queryRecorder) ExecContext(context.Context, string, ...any) (sql.Result, error) {
	return nil, fmt.Errorf("mysqlstore: queryRecorder records queries only")
}

func (r *queryRecorder) PrepareContext(context.Context, string) (*sql.Stmt, error) {
	return nil, fmt.Errorf("mysqlstore: queryRecorder records queries only")
}

func (r *queryRecorder) QueryRowContext(context.Context, string, ...any) *sql.Row { return nil }
