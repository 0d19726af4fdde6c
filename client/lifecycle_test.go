package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/client"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// TestForgetAndEraseAgainstRealHandlers: ForgetSource and EraseScope against the real API and a worker.
func TestForgetAndEraseAgainstRealHandlers(t *testing.T) {
	store := enginetest.Open(t, db.EngineSQLite)
	ledger := coordinator.NewLedger(store)
	srv := httptest.NewServer(handlers.New(handlers.Deps{Journal: sources.NewJournal(store), Memory: memory.Reader{Store: store},
		Ledger: ledger, Store: store, Role: "all", Flusher: &memory.Flusher{Ledger: ledger, Consumer: memory.Consumer(3)},
		Forgetter: &lifecycle.Forgetter{Ledger: ledger, MaxAttempts: 3}, Eraser: &lifecycle.Eraser{Ledger: ledger, MaxAttempts: 3},
		Logger: zerolog.Nop()}))
	t.Cleanup(srv.Close)
	w, err := coordinator.NewWorker(ledger, coordinator.WorkerConfig{Owner: "w", Poll: 5 * time.Millisecond, Logger: zerolog.Nop()},
		&memory.Handler{Store: store, Provider: provider.NewLocal()}, &lifecycle.RedactHandler{Ledger: ledger},
		&lifecycle.EraseHandler{Ledger: ledger, Poll: 5 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done }) //nolint:errcheck // Run returns the cancellation, not the subject here

	c := client.New(srv.URL)
	_, err = c.CaptureSource(ctx, client.CaptureSourceRequest{ScopeID: "team/a", SourceID: "m/1", Content: "Releases ship on Tuesdays."})
	require.NoError(t, err)
	_, err = c.FlushMemory(ctx, "team/a")
	require.NoError(t, err)

	f, err := c.ForgetSource(ctx, "team/a", "m/1")
	require.NoError(t, err)
	require.NotNil(t, f.OperationID)
	op, err := c.WaitOperation(ctx, *f.OperationID, nil)
	require.NoError(t, err)
	require.Equal(t, client.KindMemoryRedact, op.Kind)
	m, err := c.GetMemory(ctx, "team/a")
	require.NoError(t, err)
	require.Empty(t, m.Entries)
	_, err = c.ForgetSource(ctx, "team/a", "nope")
	var ae *client.APIError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, http.StatusNotFound, ae.Status)
	require.Equal(t, "source_not_found", ae.Code)

	e, err := c.EraseScope(ctx, "team/a")
	require.NoError(t, err)
	require.Equal(t, "team/a", e.ScopeID)
	op, err = c.WaitOperation(ctx, e.OperationID, nil)
	require.NoError(t, err)
	require.Equal(t, client.KindScopeErase, op.Kind)
	list, err := c.ListSources(ctx, client.ListSourcesParams{ScopeID: "team/a"})
	require.NoError(t, err)
	require.Empty(t, list.Items)
}
