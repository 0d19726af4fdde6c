package cli_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/cli"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// realAPI serves the real HTTP handlers over an embedded SQLite store, with a real worker (coordinator.Worker)
// running Memory and Experience.
func realAPI(t *testing.T) string {
	t.Helper()
	store := enginetest.Open(t, db.EngineSQLite)
	ledger := coordinator.NewLedger(store)
	w, err := coordinator.NewWorker(ledger, coordinator.WorkerConfig{Owner: "cli-test-worker", Poll: 20 * time.Millisecond,
		Logger: zerolog.Nop()}, &memory.Handler{Store: store, Provider: provider.NewLocal()},
		&experience.Handler{Store: store, Provider: provider.NewLocal()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	d := handlers.Deps{Journal: sources.NewJournal(store), Memory: memory.Reader{Store: store},
		Experience: experience.Reviews{Store: store}, Ledger: ledger, Store: store, Role: "all", Logger: zerolog.Nop(),
		Flusher:   &memory.Flusher{Ledger: ledger, Consumer: memory.Consumer(3), Wake: w.Wake},
		Incubator: &experience.Incubator{Ledger: ledger, Consumer: experience.Consumer(3), Wake: w.Wake}}
	srv := httptest.NewServer(handlers.New(d))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestExperienceIncubateAndReview drives the experience commands against a real server: incubate proposes a
// lesson from a task outcome, candidates lists it pending with its version, a stale version is refused with
// candidate_conflict, approve at the right version approves it, and a second incubation has nothing to do.
func TestExperienceIncubateAndReview(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	url := realAPI(t)
	code, _, errOut := run("sources", "add", "--server", url, "--scope", "team", "--metadata", `{"kind":"task-outcome"}`,
		"Retrying the flaky test twice hid a real race. Always run with -race.")
	require.Equal(t, app.ExitOK, code, errOut)
	code, _, errOut = run("sources", "add", "--server", url, "--scope", "team", "The user likes short answers.")
	require.Equal(t, app.ExitOK, code, errOut)

	code, out, errOut := run("experience", "incubate", "--server", url, "--scope", "team", "--poll", "10ms")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Regexp(t, `^incubated 2 sources of scope team: journal 0 → 2 of 2; 1 candidates proposed \(operation [0-9a-f-]{36}\)\n`+
		`review them: powercontext experience candidates --scope team --status pending\n$`, out)

	code, out, errOut = run("experience", "candidates", "--server", url, "--scope", "team", "--status", "pending", "--output", "json")
	require.Equal(t, app.ExitOK, code, errOut)
	var list struct {
		Items []struct {
			CandidateID  string `json:"candidate_id"`
			Status       string `json:"status"`
			StateVersion int64  `json:"state_version"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Len(t, list.Items, 1)
	cand := list.Items[0]
	require.Equal(t, "pending", cand.Status)
	code, out, errOut = run("experience", "candidates", "--server", url, "--scope", "team")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Regexp(t, regexp.MustCompile(`(?m)^CANDIDATE ID +STATUS +VERSION +CREATED +CITES +TITLE\n`+cand.CandidateID+` +pending +1 `), out)

	code, _, errOut = run("experience", "approve", "--server", url, cand.CandidateID, "--expected-version", "7")
	require.Equal(t, app.ExitClientError, code)
	require.Contains(t, errOut, "candidate_conflict")
	code, _, errOut = run("experience", "approve", "--server", url, cand.CandidateID)
	require.Equal(t, app.ExitConfig, code)
	require.Contains(t, errOut, "--expected-version is required")

	code, out, errOut = run("experience", "approve", "--server", url, cand.CandidateID, "--expected-version", "1")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Regexp(t, `(?m)^status +approved$`, out)
	code, _, errOut = run("experience", "reject", "--server", url, cand.CandidateID, "--expected-version", "2")
	require.Equal(t, app.ExitClientError, code, "an approved candidate is no longer pending")
	require.Contains(t, errOut, "candidate_conflict")

	code, out, errOut = run("experience", "incubate", "--server", url, "--scope", "team")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Equal(t, "nothing to incubate: scope team is up to date at journal position 2\n", out)
	code, out, errOut = run("experience", "incubate", "--server", url, "--scope", "team", "--output", "json")
	require.Equal(t, app.ExitOK, code, errOut)
	require.JSONEq(t, `{"status":"idle","previous_cursor":2,"current_cursor":2,"high_watermark":2,"processed_source_count":0,"candidate_count":0,"operation_id":null}`, out)
}
