// Package e2e is the distributed end-to-end proof of the Work Ledger: it builds the powercontext binary, runs a
// fleet of real processes (2 api, 2 scheduler, 3 worker) in distributed mode on MariaDB and on PostgreSQL against
// an in-test fake OpenAI-compatible provider (random latency, ~10% retryable failures), drives capture and flush
// load through both API replicas, injects faults, lets the fleet drain and checks the promises with SQL.
//
// The rounds (each on MariaDB and on PostgreSQL):
//
//   - chaos (TestFleet): SIGKILLs a worker or scheduler (the leader more often, an API now and then) every 1–3 s and
//     restarts it; freezes a worker or the scheduler leader past its lease: SIGSTOP/SIGCONT, or a stall of its
//     database connections (workers and schedulers reach the database through an in-test relay that can stall and
//     heal), or a zombie (the relay stalls the moment the provider answers a worker, so its commit arrives after
//     another worker re-ran the window); SIGTERM-drains one busy worker in the middle of the run.
//   - database (TestFleetDatabaseRestart): the fleet runs on a private server the harness starts itself (initdb +
//     postgres, or mariadb-install-db + mariadbd, in a temporary directory on a free port, as the postgres or
//     mysql user when the tests run as root) and, under load, SIGKILLs the server with all its processes and
//     restarts it (crash recovery), and stops it cleanly for twice the worker lease. Besides the SQL checks: every
//     API request that overlapped an outage is answered with a clean 503 runtime_not_ready in the documented error
//     body (never a 500) within 10 s, no request outside the outages gets a 5xx, readiness reports the database not
//     ok whenever it is asked while the server is certainly down, and the fleet commits again after every outage
//     (the round reports how long after the server was back).
//   - skew (TestFleetClockSkew): the chaos round, shorter, with the clocks of two workers, both schedulers and an
//     API shifted by about an hour either way or a few minutes, two of them stepping during the run. libfaketime
//     cannot shift a Go program (Go reads the clock through the vDSO, not libc), so this round builds the binary
//     with -tags clockskew, in which internal/clock adds PC_TEST_CLOCK_SKEW to every wall-clock read of the service,
//     and checks from each process's own request log (one probe per second) that it really ran on its skewed clock.
//   - load (TestLoad, `make load`): an open-loop generator at a fixed arrival rate (captures, flushes, reads,
//     searches) through both API replicas on a private server; reports latency percentiles per route, answers by
//     status, queue depth and database connections over time; requires no 5xx, no transport error, no lost Source.
//     The full run (LOAD=1) adds a run per engine that restarts the whole worker fleet in the middle.
//   - broken (TestFleetBrokenBuildReportsDuplicates, E2E_BROKEN=1 or E2E_LONG=1): the chaos round against a binary
//     built with -tags unsafe_nofence, which removes the claim verification in coordinator.Ledger.Complete and the
//     cursor compare-and-set in sources.Advance; the same checks must report duplicates and the history checker must
//     reject its history.
//
// The SQL checks after every round:
//
//   - every scope's memory and experience cursor equals its journal head (lost = 0);
//   - exactly one commit per (scope, window): one Memory revision per (scope, window_after, cursor_generation) and one
//     Experience candidate per experience window (duplicates = 0);
//   - Memory revisions follow window order in every scope (inversions = 0);
//   - no item is running without an unexpired lease, nothing is left queued, no item failed unless its retry budget
//     was spent (stuck = 0);
//   - every finished attempt has an outcome, and every commit came from the item's last, succeeded attempt while its
//     lease was alive (an attempt whose claim went stale never commits);
//   - the scheduler lease row, sampled every ~100 ms, never had two overlapping holders and its fence only grew;
//   - the history (history_test.go): every operation a client saw (captures, flushes answered 200, operations read
//     as succeeded, latest revisions read), with its send and answer times, plus every window the database committed
//     and each scope's final state, is linearizable against a per-scope model of the journal and its memory and
//     Experience windows (porcupine, partitioned by scope). A history that is not is written as porcupine's HTML
//     visualisation to $E2E_ARTIFACTS or the temporary directory, and the verdict names the file.
//
// Budgets: a round's fault phase lasts its nominal time and, on a slow machine, longer while windows are still being
// committed (up to three times its maximum); the drain waits while the backlog still shrinks; both stop before the
// test binary's -timeout. After all tests the package prints one verdict line per round; a failing round names its
// causes there, each marked protocol (a counter, with the first finding), service (a crash, a 500, a hang, wrong
// readiness) or harness (the round's own budget ran out or its minimums were not reached).
//
// Run it with `make e2e` (short variants, also part of `make test`), `make e2e E2E_LONG=1` (long variants, plus
// the broken-build round), `E2E_BROKEN=1 make e2e`, and `make load`. `go test -short` skips everything here. Linux
// only (SIGSTOP, Pdeathsig, process groups). Process logs go to a temporary directory that is kept (and listed) when a
// round fails, or always with E2E_KEEP_LOGS=1.
package e2e
