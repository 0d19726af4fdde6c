// Package conv is the one conversion vocabulary of the three adapters (db/postgresstore, db/mysqlstore,
// db/sqlitestore) between the neutral rows of package db and the sqlc-generated rows and parameters of
// db/gen/<engine>gen. Only the adapters import it.
//
// sqlc.yaml gives the three generated packages the same Go types for the same column, so one generic function
// serves all three: a generated struct is converted through the struct shape it shares with its twins on the other
// engines (a type parameter constrained by ~shape). NULL-able columns are pointers; the neutral rows use zero values
// for NULL ("" text, 0 sequence, zero time, nil bytes). The one difference between the engines is the Go type of a
// time (type parameter T): time.Time on PostgreSQL and MySQL, int64 unix microseconds on SQLite. Every time written
// is UTC truncated to the microsecond; every time read is UTC.
//
// Naming: xFromGen converts a generated row to the neutral x; xToGen builds the generated parameters of x's query,
// the generated type named first (conv.WorkItemToGen[postgresgen.WorkItemInsertParams](item)).
package conv

import (
	"time"

	"github.com/powercontext/powercontext/db"
)

// Time is the Go type of a time in one engine's generated code: time.Time (PostgreSQL, MySQL) or int64 unix
// microseconds UTC (SQLite, whose time columns are INTEGER).
type Time interface{ time.Time | int64 }

// TimeFromGen reads a generated time as UTC.
func TimeFromGen[T Time](t T) time.Time {
	switch v := any(t).(type) {
	case time.Time:
		return v.UTC()
	case int64:
		return time.UnixMicro(v).UTC()
	}
	panic("unreachable")
}

// TimeToGen is t in UTC truncated to the microsecond, in the engine's time type.
func TimeToGen[T Time](t time.Time) T {
	t = t.UTC().Truncate(time.Microsecond)
	var out T
	switch p := any(&out).(type) {
	case *time.Time:
		*p = t
	case *int64:
		*p = t.UnixMicro()
	}
	return out
}

// nullTimeFromGen reads a NULL-able time: NULL is the zero time.
func nullTimeFromGen[T Time](t *T) time.Time {
	if t == nil {
		return time.Time{}
	}
	return TimeFromGen(*t)
}

// nullTimeToGen writes the zero time as NULL.
func nullTimeToGen[T Time](t time.Time) *T {
	if t.IsZero() {
		return nil
	}
	v := TimeToGen[T](t)
	return &v
}

// TextFromGen reads NULL text as "" (also for the adapters' own rows).
func TextFromGen(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TextToGen writes "" as NULL (also an absent filter in the adapters' own parameters).
func TextToGen(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// seqFromGen reads a NULL sequence as 0 (sequences are > 0 when present).
func seqFromGen(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// seqToGen writes the sequence 0 as NULL.
func seqToGen(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

// Errors is one engine's interpretation of driver errors as the db sentinels (db.ErrNotFound, db.ErrConflict,
// db.ErrDeadlock); nil stays nil. Its methods turn the results of generated calls into the results of db.Queries.
type Errors func(error) error

// Err interprets err.
func (e Errors) Err(err error) error {
	if err == nil {
		return nil
	}
	return e(err)
}

// Rows is the result of an :execrows statement whose caller wants the count (rows matched).
func (e Errors) Rows(n int64, err error) (int64, error) {
	if err != nil {
		return 0, e(err)
	}
	return n, nil
}

// Inserted is the result of an "InsertIfAbsent" statement: whether it wrote its row.
func (e Errors) Inserted(n int64, err error) (bool, error) {
	if err != nil {
		return false, e(err)
	}
	return n == 1, nil
}

// Found is the result of an update of a row that must exist: db.ErrNotFound when no row matched.
func (e Errors) Found(n int64, err error) error {
	if err != nil {
		return e(err)
	}
	if n == 0 {
		return db.ErrNotFound
	}
	return nil
}

// One is the result of a :one query converted with fromGen.
func One[R, N any](e Errors, r R, err error, fromGen func(R) N) (N, error) {
	if err != nil {
		var zero N
		return zero, e(err)
	}
	return fromGen(r), nil
}

// Many is the result of a :many query converted with fromGen; never nil on success.
func Many[R, N any](e Errors, rs []R, err error, fromGen func(R) N) ([]N, error) {
	if err != nil {
		return nil, e(err)
	}
	out := make([]N, len(rs))
	for i, r := range rs {
		out[i] = fromGen(r)
	}
	return out, nil
}

// Locked is the result of a "Lock" query that returns the locked row and the database clock of the same statement.
func Locked[R, N any, T Time](e Errors, r R, now T, err error, fromGen func(R) N) (N, time.Time, error) {
	if err != nil {
		var zero N
		return zero, time.Time{}, e(err)
	}
	return fromGen(r), TimeFromGen(now), nil
}

// Strings is a :many query of one text column; never nil on success.
func (e Errors) Strings(s []string, err error) ([]string, error) {
	if err != nil {
		return nil, e(err)
	}
	if s == nil {
		s = []string{}
	}
	return s, nil
}
