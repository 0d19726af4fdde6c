package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// clockSlack is how far the database clock may be from the process clock (same host in tests).
const clockSlack = 5 * time.Second

func randHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n/2)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// us normalises a time the way adapters write it: UTC, truncated to the microsecond.
func us(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func dbNow(t *testing.T, s db.Store) time.Time {
	t.Helper()
	now, err := s.DBNow(context.Background())
	require.NoError(t, err)
	return now
}

func requireUTC(t *testing.T, ts time.Time) {
	t.Helper()
	require.Equal(t, time.UTC, ts.Location(), "times read from the store must be UTC")
}

func requireNear(t *testing.T, want, got time.Time, slack time.Duration) {
	t.Helper()
	d := got.Sub(want)
	if d < 0 {
		d = -d
	}
	require.LessOrEqual(t, d, slack, "want %s, got %s", want, got)
}

// holdInTx runs hold in a transaction of its own and keeps that transaction open, its locks held, until release is
// called; release lets it commit and returns its error.
func holdInTx(t *testing.T, s db.Store, hold func(ctx context.Context, q db.Queries) error) (release func() error) {
	t.Helper()
	locked, done, end := make(chan struct{}), make(chan error, 1), make(chan struct{})
	go func() {
		done <- s.InTx(context.Background(), func(ctx context.Context, q db.Queries) error {
			if err := hold(ctx, q); err != nil {
				close(locked)
				return err
			}
			close(locked)
			<-end
			return nil
		})
	}()
	<-locked
	return func() error {
		close(end)
		return <-done
	}
}
