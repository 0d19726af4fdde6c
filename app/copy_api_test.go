package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// serveForCopy runs a single_node runtime on the migrated database rawURL with every discoverer off (nothing may
// change the copied state while the two servers are compared) and returns its base URL.
func serveForCopy(t *testing.T, rawURL string) string {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DatabaseURL, cfg.Listen = rawURL, "127.0.0.1:0"
	cfg.ScheduleSeconds, cfg.ExperienceScheduleSeconds, cfg.EmbeddingsScanSeconds = 0, 0, 0
	require.NoError(t, cfg.Validate())
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := Start(ctx, cfg, io.Discard)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return "http://" + rt.Addr()
}

// getJSON reads one API answer: its status and its body decoded.
func getJSON(t *testing.T, base, path string) (int, any) {
	t.Helper()
	res, err := http.Get(base + path)
	require.NoError(t, err)
	defer res.Body.Close()
	var body any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body), path)
	return res.StatusCode, body
}

// TestServerCopyAPIEquality: after `server copy` from an embedded SQLite deployment to PostgreSQL, the HTTP API of a
// server on each database answers the same for every copied scope: its Sources (a forgotten one included), its
// Memory and revisions, search results with their scores, context assembly, and its Experience candidates.
func TestServerCopyAPIEquality(t *testing.T) {
	from := enginetest.NewDatabase(t, db.EngineSQLite)
	_, err := runRoot(t, "server", "migrate", "--database-url", from)
	require.NoError(t, err)
	fillForCopy(t, enginetest.OpenStore(t, enginetest.ParseURL(t, from)))
	to := enginetest.NewDatabase(t, db.EnginePostgres)
	_, err = runRoot(t, "server", "migrate", "--database-url", to)
	require.NoError(t, err)
	out, err := runRoot(t, "server", "copy", "--from", from, "--to", to)
	require.NoError(t, err, out)

	src, dst := serveForCopy(t, from), serveForCopy(t, to)
	for _, scope := range []string{"team/a", "team/b"} {
		q := url.QueryEscape(scope)
		for _, path := range []string{
			"/v1/sources?scope_id=" + q,
			"/v1/memory?scope_id=" + q,
			"/v1/memory/revisions?scope_id=" + q,
			"/v1/experience/candidates?scope_id=" + q,
			"/v1/experience/candidates?status=approved&scope_id=" + q,
			"/v1/memory/search?q=releases&scope_id=" + q,
			"/v1/context?q=releases&scope_id=" + q,
		} {
			wantStatus, want := getJSON(t, src, path)
			gotStatus, got := getJSON(t, dst, path)
			require.Equal(t, wantStatus, gotStatus, path)
			require.Equal(t, want, got, path)
		}
	}
	// The listings are not trivially equal: the source holds what fillForCopy wrote.
	items := func(path string) []any {
		t.Helper()
		status, body := getJSON(t, src, path)
		require.Equal(t, http.StatusOK, status, path)
		list, ok := body.(map[string]any)["items"].([]any)
		require.True(t, ok, "%s: %v", path, body)
		return list
	}
	require.Len(t, items("/v1/sources?scope_id=team%2Fa"), 2, "a Source and a tombstone")
	require.Len(t, items("/v1/sources?scope_id=team%2Fb"), 1)
	require.Len(t, items("/v1/experience/candidates?scope_id=team%2Fa"), 1, "the approved lesson")
	status, memory := getJSON(t, src, "/v1/memory?scope_id=team%2Fa")
	require.Equal(t, http.StatusOK, status)
	require.Len(t, memory.(map[string]any)["entries"], 1)
	for _, path := range []string{"/v1/memory/search?q=releases&scope_id=team%2Fa", "/v1/context?q=releases&scope_id=team%2Fa"} {
		status, body := getJSON(t, src, path)
		require.Equal(t, http.StatusOK, status, "%s: %v", path, body)
		require.Contains(t, fmt.Sprint(body), "Releases ship on Tuesdays.", path)
	}
}
