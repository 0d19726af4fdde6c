package db

import (
	"context"
	"time"
)

// ClockQueries are the statements of no table (file db.sql): the database clock (sql/queries/<engine>/db.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type ClockQueries interface {
	// DBNow returns the database clock (UTC): CURRENT_TIMESTAMP(6) / clock_timestamp() / SQLite's clock.
	DBNow(ctx context.Context) (time.Time, error)

	// Savepoint runs fn inside a savepoint of the current transaction (docs/protocol.md#complete-many): when fn
	// returns an error, only what fn wrote is rolled back, fnErr is that error and the transaction goes on. err is
	// non-nil when the savepoint itself failed (or q is not inside InTx): the transaction cannot go on. Savepoints
	// do not nest.
	Savepoint(ctx context.Context, fn func(ctx context.Context, q Queries) error) (fnErr error, err error)
}
