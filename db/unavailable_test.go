package db_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// TestLostConnectionIsErrUnavailable cuts every connection of a store on a real server (and refuses new ones): its
// calls, in autocommit and in a transaction, fail with db.ErrUnavailable (which the API answers with 503), not with
// a bare driver error (which it would answer with 500).
func TestLostConnectionIsErrUnavailable(t *testing.T) {
	available := enginetest.Engines(t)
	for _, engine := range []db.Engine{db.EnginePostgres, db.EngineMySQL} {
		t.Run(string(engine), func(t *testing.T) {
			if !slices.Contains(available, engine) {
				t.Skipf("%s unavailable", engine)
			}
			store, relay := enginetest.OpenThroughRelay(t, engine)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := store.DBNow(ctx)
			require.NoError(t, err)
			relay.Cut()
			_, err = store.DBNow(ctx)
			require.ErrorIs(t, err, db.ErrUnavailable, "autocommit call after the cut: %v", err)
			err = store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
				_, err := q.DBNow(ctx)
				return err
			})
			require.ErrorIs(t, err, db.ErrUnavailable, "transaction after the cut: %v", err)
		})
	}
}

func TestConnectionLost(t *testing.T) {
	for _, err := range []error{
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		fmt.Errorf("read: %w", io.ErrUnexpectedEOF),
		syscall.ECONNRESET,
	} {
		require.True(t, db.ConnectionLost(err), "%v", err)
	}
	for _, err := range []error{nil, db.ErrNotFound, context.DeadlineExceeded, errors.New("syntax error")} {
		require.False(t, db.ConnectionLost(err), "%v", err)
	}
}
