package handlers

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// A database that cannot be reached is answered with 503 runtime_not_ready in the documented body, never 500.
func TestDatabaseUnavailableIs503(t *testing.T) {
	t.Parallel()
	ae, ok := toAPIError(fmt.Errorf("journal: %w", fmt.Errorf("%w: connection refused", db.ErrUnavailable)))
	require.True(t, ok)
	require.Equal(t, http.StatusServiceUnavailable, ae.Status)
	require.Equal(t, CodeRuntimeNotReady, ae.Code)
	require.Equal(t, map[string]any{"dependency": "database"}, ae.Details)
}
