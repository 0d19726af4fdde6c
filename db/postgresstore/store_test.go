// The engine-specific tests of the PostgreSQL adapter: driver error interpretation. Every statement's contract is
// checked by the conformance suite (db/storetest).
package postgresstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/postgresstore"
)

// TestInterpretError checks the driver error mapping on errors raised by the server.
func TestInterpretError(t *testing.T) {
	ctx := context.Background()
	s := enginetest.Open(t, db.EnginePostgres).(*postgresstore.Store)

	_, err := s.WorkLaneGet(ctx, "missing")
	require.ErrorIs(t, err, db.ErrNotFound)

	for code, want := range map[string]error{"40P01": db.ErrDeadlock, "40001": db.ErrDeadlock, "23505": db.ErrConflict} {
		_, err := s.Pool().Exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '`+code+`'; END $$`)
		require.Error(t, err)
		err = postgresstore.InterpretErrorForTest(err)
		require.ErrorIs(t, err, want, code)
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr, "the driver error stays in the chain")
		require.Equal(t, code, pgErr.Code)
	}
}
