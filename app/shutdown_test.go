package app_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// queryString reads one string with ? placeholders on every engine; no row and NULL read as "". A failure is
// returned as "error: …" so that require.Eventually conditions can call it.
func queryString(sqlDB *sql.DB, engine db.Engine, query string, args ...any) string {
	if engine == db.EnginePostgres {
		for i := 1; strings.Contains(query, "?"); i++ {
			query = strings.Replace(query, "?", "$"+strconv.Itoa(i), 1)
		}
	}
	var v sql.NullString
	err := sqlDB.QueryRow(query, args...).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ""
	case err != nil:
		return "error: " + err.Error()
	}
	return v.String
}

// flushAsync posts a flush that waits up to 20 s for its operation; the answer arrives on the returned channel.
func (e *obsEnv) flushAsync(scope string) <-chan response {
	out := make(chan response, 1)
	go func() {
		body, _ := json.Marshal(map[string]any{"scope_id": scope})
		req, _ := http.NewRequest(http.MethodPost, e.base+"/v1/memory/flush", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Prefer", "wait=20")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- response{status: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- response{status: resp.StatusCode, body: b}
	}()
	return out
}

func (e *obsEnv) running() bool {
	select {
	case <-e.stopped:
		return false
	default:
		return true
	}
}

// Shutdown is ordered (docs/architecture.md#shutdown). A flush whose model call is in flight when the process is
// told to stop: readiness turns not_ready and the scheduler gives up the work-discovery lease at once, but HTTP keeps
// serving and the member stays registered while the attempt drains; once the model answers, the attempt commits, the
// waiting flush gets its 200 over HTTP, and only then is the member deregistered, HTTP closed and the single-node
// lease released.
func TestShutdownDrainsInFlightWorkBeforeClosing(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		model := &fakeModel{apiKey: "key", hanging: make(chan struct{}, 1), release: make(chan struct{})}
		env := startRuntime(t, engine, model)
		sqlDB := enginetest.OpenSQLDB(t, env.url)
		leaseOwner := func(name string) string {
			return queryString(sqlDB, engine, "SELECT owner_id FROM pc_scheduler_leases WHERE lease_name = ?", name)
		}
		members := func() string {
			return queryString(sqlDB, engine, "SELECT max(member_id) FROM pc_runtime_members")
		}
		require.Eventually(t, func() bool { return leaseOwner("work-discovery") == env.member }, 10*time.Second,
			10*time.Millisecond, "the scheduler leads")
		if engine == db.EnginePostgres { // the listener connects in the background; the log is checked at the end
			require.Eventually(t, func() bool { return strings.Contains(env.logs.String(), "wake-up listener connected") },
				10*time.Second, 10*time.Millisecond, "the wake-up listener connects")
		}

		env.capture(t, "scope-drain", markerHold+": the deploy window is Tuesday")
		flushed := env.flushAsync("scope-drain")
		<-model.hanging // the attempt is in prepare: its model call is in flight
		env.cancel()    // what SIGTERM does

		// 1. Readiness turns not_ready and discovery stops, releasing its lease while the attempt still runs.
		require.Eventually(t, func() bool {
			r := env.do(t, http.MethodGet, "/health/ready", nil)
			return r.status == http.StatusServiceUnavailable && r.json(t)["checks"].(map[string]any)["process"] == "stopping"
		}, 10*time.Second, 10*time.Millisecond)
		require.Eventually(t, func() bool { return leaseOwner("work-discovery") == "" }, 10*time.Second, 10*time.Millisecond)
		// 2. While the attempt drains, HTTP serves (a capture is stored), the member is still registered, the
		// single-node lease is still held, and Run has not returned.
		require.Equal(t, http.StatusOK, env.do(t, http.MethodGet, "/health/live", nil).status)
		env.capture(t, "scope-late", "captured while the worker drains")
		require.Equal(t, env.member, members())
		require.Equal(t, env.member, leaseOwner("single-node-runtime"))
		require.True(t, env.running())

		close(model.release) // the model answers: the attempt commits, and the waiting flush gets its answer
		r := <-flushed
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, "processed", r.json(t)["status"])
		opID := r.json(t)["operation_id"].(string)

		<-env.stopped
		require.NoError(t, env.runErr)
		// 3–5. Deregistered, HTTP closed, single-node lease released; the drained attempt's commit is durable.
		require.Empty(t, members())
		require.Empty(t, leaseOwner("single-node-runtime"))
		require.Equal(t, db.StatusSucceeded, queryString(sqlDB, engine, "SELECT status FROM pc_work_items WHERE work_id = ?", opID))
		_, err := net.DialTimeout("tcp", strings.TrimPrefix(env.base, "http://"), time.Second)
		require.Error(t, err, "the listener is closed")
		logs := env.logs.String()
		last := -1
		for _, step := range []string{"roles", "membership", "http", "single_node_lease"} {
			i := strings.Index(logs, `"step":"`+step+`"`)
			require.Greater(t, i, last, "shutdown step %s is logged after the previous one", step)
			last = i
		}
		require.NotContains(t, logs, "shutdown step failed")
		if engine == db.EnginePostgres { // POWERCONTEXT_COORDINATION_NOTIFY is on by default there
			require.Contains(t, logs, "wake-up listener connected")
		} else {
			require.NotContains(t, logs, "wake-up listener")
		}
	})
}

// An attempt that outlasts the shutdown grace is abandoned without a write: Run returns after the grace (real time
// is the point here), the work item stays running under its old lease for another worker to recover after expiry,
// and the member is still deregistered.
func TestShutdownAbandonsWorkAfterTheGrace(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		model := &fakeModel{apiKey: "key", hanging: make(chan struct{}, 1), release: make(chan struct{})}
		const grace = 300 * time.Millisecond
		env := startRuntime(t, engine, model, func(c *app.Config) { c.WorkerShutdownGraceSeconds = grace.Seconds() })
		sqlDB := enginetest.OpenSQLDB(t, env.url)

		env.capture(t, "scope-slow", markerHold+": never answered")
		r := env.do(t, http.MethodPost, "/v1/memory/flush", map[string]any{"scope_id": "scope-slow"}, "Prefer", "respond-async")
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		opID := r.json(t)["operation_id"].(string)
		<-model.hanging
		start := time.Now()
		env.cancel()
		<-env.stopped
		require.NoError(t, env.runErr)
		require.GreaterOrEqual(t, time.Since(start), grace, "the worker waited for the grace")
		require.Equal(t, db.StatusRunning, queryString(sqlDB, engine, "SELECT status FROM pc_work_items WHERE work_id = ?", opID))
		require.Empty(t, queryString(sqlDB, engine, "SELECT max(member_id) FROM pc_runtime_members"))
		require.Contains(t, env.logs.String(), "shutdown grace elapsed, abandoning attempts")
	})
}
