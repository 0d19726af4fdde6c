package coordinator

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/powercontext/powercontext/db"
)

// createAttempts bounds CreateRow's retries of a deadlocked insert-if-absent.
const createAttempts = 8

// CreateRow runs an autocommitted insert-if-absent (docs/protocol.md#creating-rows) and retries it when the engine
// picked it as a deadlock victim. That happens only on InnoDB and only when the row was just deleted (a scope
// erase deletes its journal head and idle lanes): concurrent inserts of the same key then take shared locks on the
// delete-marked record and deadlock upgrading them. The statement holds nothing else and is idempotent, so the
// retry is safe here, unlike a deadlock inside a locking transaction, which stays a bug to expose (db.ErrDeadlock).
func CreateRow(ctx context.Context, insert func(context.Context) (bool, error)) error {
	var err error
	for i := range createAttempts {
		if _, err = insert(ctx); !errors.Is(err, db.ErrDeadlock) {
			return err
		}
		// Spread the racers apart: 1–2 ms, doubling.
		d := time.Duration(1<<i) * time.Millisecond
		d += rand.N(d) //nolint:gosec // jitter, not a secret
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	return err
}
