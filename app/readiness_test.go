package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// TestReadinessReportsMissingMemberAndFailingScheduler: readiness names the process's own membership row when it is
// gone (not_ready until the next heartbeat writes it again), and a scheduler whose ticks keep failing
// (docs/protocol.md#scheduler) instead of calling it leader.
func TestReadinessReportsMissingMemberAndFailingScheduler(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		env := startRuntime(t, engine, &fakeModel{apiKey: "key"}, func(c *app.Config) {
			// Heartbeats far apart, so the deleted row stays deleted while the test looks.
			c.MemberHeartbeatSeconds, c.MemberTTLSeconds = 3, 10
		})
		defer env.stop()
		sqlDB := enginetest.OpenSQLDB(t, env.url)
		ready := func() (int, map[string]any) {
			r := env.do(t, http.MethodGet, "/health/ready", nil)
			return r.status, r.json(t)["checks"].(map[string]any)
		}
		require.Eventually(t, func() bool { _, c := ready(); return c["scheduler"] == "leader" }, 10*time.Second, 10*time.Millisecond)
		status, checks := ready()
		require.Equal(t, http.StatusOK, status, "%v", checks)
		require.Equal(t, "ok", checks["membership"])

		_, err := sqlDB.Exec("DELETE FROM pc_runtime_members")
		require.NoError(t, err)
		status, checks = ready()
		require.Equal(t, http.StatusServiceUnavailable, status)
		require.Equal(t, "missing", checks["membership"])
		require.Eventually(t, func() bool { _, c := ready(); return c["membership"] == "ok" }, 15*time.Second, 20*time.Millisecond,
			"the next heartbeat writes the row again")

		// Every tick now fails (the scan table is gone): after three in a row the scheduler is reported failing, and
		// a single_node process stays up for its API, degraded.
		_, err = sqlDB.Exec("DROP TABLE pc_scheduler_scans")
		require.NoError(t, err)
		require.Eventually(t, func() bool { _, c := ready(); return c["scheduler"] == "failing" }, 15*time.Second, 20*time.Millisecond)
		r := env.do(t, http.MethodGet, "/health/ready", nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, "degraded", r.json(t)["status"])
	})
}
