package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
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

// postJSON sends one API request with a JSON body and returns its status and decoded body.
func postJSON(t *testing.T, base, path, body string, headers ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out), path)
	return res.StatusCode, out
}

// copyInto migrates a fresh database on engine and copies from into it with `server copy`; it returns its URL.
func copyInto(t *testing.T, from string, engine db.Engine) string {
	t.Helper()
	to := enginetest.NewDatabase(t, engine)
	_, err := runRoot(t, "server", "migrate", "--database-url", to)
	require.NoError(t, err)
	out, err := runRoot(t, "server", "copy", "--from", from, "--to", to)
	require.NoError(t, err, out)
	require.Contains(t, out, "copied 2 scopes")
	return to
}

// copyPaths are the API reads compared between a source server and its copy, per scope.
func copyPaths(scope string) []string {
	q := url.QueryEscape(scope)
	return []string{
		"/v1/sources?scope_id=" + q,
		"/v1/memory?scope_id=" + q,
		"/v1/memory/revisions?scope_id=" + q,
		"/v1/experience/candidates?scope_id=" + q,
		"/v1/experience/candidates?status=approved&scope_id=" + q,
		"/v1/memory/search?q=releases&scope_id=" + q,
		"/v1/context?q=releases&scope_id=" + q,
	}
}

// requireSameAnswers requires every read of copyPaths to answer the same status and body on both servers.
func requireSameAnswers(t *testing.T, src, dst string) {
	t.Helper()
	for _, scope := range []string{"team/a", "team/b"} {
		for _, path := range copyPaths(scope) {
			wantStatus, want := getJSON(t, src, path)
			gotStatus, got := getJSON(t, dst, path)
			require.Equal(t, wantStatus, gotStatus, path)
			require.Equal(t, want, got, path)
		}
	}
}

// requireKeepsWorking captures into a copied scope and flushes it: the new Source continues the copied journal
// densely and the flush commits the window after the copied cursor as the next revision.
func requireKeepsWorking(t *testing.T, base string) {
	t.Helper()
	status, body := postJSON(t, base, "/v1/sources", `{"scope_id":"team/a","source_id":"s3","content":"Hotfixes ship any day."}`)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	require.EqualValues(t, 3, body["journal_position"], "%v", body)
	// A flush waits for its window on the server; one still running when the wait ends answers 202, and the next
	// flush joins the same window. Loop until the window is committed (the test binary's timeout bounds it).
	for {
		status, body = postJSON(t, base, "/v1/memory/flush", `{"scope_id":"team/a"}`, "Prefer", "wait=30")
		if status != http.StatusAccepted {
			break
		}
	}
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.Equal(t, "processed", body["status"], "%v", body)
	require.EqualValues(t, 2, body["previous_cursor"], "%v", body)
	require.EqualValues(t, 3, body["current_cursor"], "%v", body)
	require.EqualValues(t, 3, body["high_watermark"], "%v", body)
	require.EqualValues(t, 2, body["memory"].(map[string]any)["revision"], "%v", body)
	status, memory := getJSON(t, base, "/v1/memory?scope_id=team%2Fa")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, fmt.Sprint(memory), "Hotfixes ship any day.")
	status, src := getJSON(t, base, "/v1/sources?scope_id=team%2Fb")
	require.Equal(t, http.StatusOK, status)
	require.Len(t, src.(map[string]any)["items"], 1, "the other copied scope is untouched")
}

// TestServerCopyAPIEquality: after `server copy` from an embedded SQLite deployment to PostgreSQL and to MariaDB
// (MySQL mode), and from each back to a new SQLite deployment, the HTTP API of a server on each database answers the
// same for every copied scope as the source's: its Sources (a forgotten one included), its Memory and revisions,
// search results with their scores, context assembly, and its Experience candidates. Each copy then keeps working:
// a new capture continues the journal and a flush commits the next revision.
func TestServerCopyAPIEquality(t *testing.T) {
	from := enginetest.NewDatabase(t, db.EngineSQLite)
	_, err := runRoot(t, "server", "migrate", "--database-url", from)
	require.NoError(t, err)
	fillForCopy(t, enginetest.OpenStore(t, enginetest.ParseURL(t, from)))
	src := serveForCopy(t, from)

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

	for _, engine := range []db.Engine{db.EnginePostgres, db.EngineMySQL} {
		t.Run(string(engine), func(t *testing.T) {
			to := copyInto(t, from, engine)
			back := copyInto(t, to, db.EngineSQLite)
			dst, ret := serveForCopy(t, to), serveForCopy(t, back)
			requireSameAnswers(t, src, dst)
			requireSameAnswers(t, src, ret)
			requireKeepsWorking(t, dst)
			requireKeepsWorking(t, ret)
		})
	}
}
