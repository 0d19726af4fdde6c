package client_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/client"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/sources"
)

// TestExportImportScopeAgainstRealHandlers: ExportScope streams a scope the server exports, PeekExportScope reads
// its scope id, ImportScope writes it under another id; a refused import is an *APIError with its code and line.
func TestExportImportScopeAgainstRealHandlers(t *testing.T) {
	store := enginetest.Open(t, db.EngineSQLite)
	ledger := coordinator.NewLedger(store)
	srv := httptest.NewServer(handlers.New(handlers.Deps{Journal: sources.NewJournal(store), Ledger: ledger, Store: store,
		Role: "api", Logger: zerolog.Nop(), Portability: &portability.Service{Store: store, Ledger: ledger, MaxAttempts: 3}}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL)
	ctx := context.Background()
	for _, content := range []string{"Releases ship on Tuesdays.", "The deploy script lives in ops/deploy.sh."} {
		_, err := sources.NewJournal(store).Capture(ctx, sources.CaptureRequest{ScopeID: "team/a", Content: content})
		require.NoError(t, err)
	}
	var buf bytes.Buffer
	n, err := c.ExportScope(ctx, "team/a", false, &buf)
	require.NoError(t, err)
	require.EqualValues(t, buf.Len(), n)
	scope, err := client.PeekExportScope(bufio.NewReader(bytes.NewReader(buf.Bytes())))
	require.NoError(t, err)
	require.Equal(t, "team/a", scope)

	res, err := c.ImportScope(ctx, "team/b", bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, "team/b", res.ScopeID)
	require.Equal(t, "team/a", res.SourceScopeID)
	require.EqualValues(t, 2, res.Counts.Sources)
	require.NotEmpty(t, res.OperationID)

	_, err = c.ImportScope(ctx, "team/b", bytes.NewReader(buf.Bytes()))
	var ae *client.APIError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, "scope_not_empty", ae.Code)
	cut := buf.String()[:strings.LastIndex(strings.TrimSuffix(buf.String(), "\n"), "\n")+1]
	_, err = c.ImportScope(ctx, "team/c", strings.NewReader(cut))
	require.True(t, errors.As(err, &ae))
	require.Equal(t, "import_truncated", ae.Code)
	require.EqualValues(t, 5, ae.Details["line"])
}

// TestExportScopeWithoutTrailerIsIncomplete: a stream that ends before its trailer is ErrExportIncomplete.
func TestExportScopeWithoutTrailerIsIncomplete(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = w.Write([]byte(`{"type":"header","scope_id":"s"}` + "\n" + `{"type":"journal_head","position":0}` + "\n"))
	}))
	t.Cleanup(srv.Close)
	var buf bytes.Buffer
	_, err := client.New(srv.URL).ExportScope(context.Background(), "s", false, &buf)
	require.ErrorIs(t, err, client.ErrExportIncomplete)
}
