// Package e2e is the distributed end-to-end proof of the Work Ledger: it builds the powercontext binary, runs a
// fleet of real processes (2 api, 2 scheduler, 3 worker) in distributed mode on MariaDB and on PostgreSQL against
// an in-test fake OpenAI-compatible provider (random latency, ~10% retryable failures), drives capture and flush
// load through both API replicas, and meanwhile:
//
//   - SIGKILLs a worker or scheduler (the leader more often, an API now and then) every 1–3 s and restarts it;
//   - freezes a worker or the scheduler leader past its lease: SIGSTOP/SIGCONT, or a stall of its database
//     connections (workers and schedulers reach the database through an in-test relay that can stall and heal), or
//     a zombie (the relay stalls the moment the provider answers a worker, so its commit arrives after another
//     worker re-ran the window);
//   - SIGTERM-drains one busy worker in the middle of the run.
//
// Then it stops the chaos and the load, lets the fleet drain, and checks the promises with SQL:
//
//   - every scope's memory and experience cursor equals its journal head (lost = 0);
//   - exactly one commit per (scope, window): one Memory revision per (scope, window_after, cursor_generation) and one
//     Experience candidate per experience window (duplicates = 0);
//   - Memory revisions follow window order in every scope (inversions = 0);
//   - no item is running without an unexpired lease, nothing is left queued, no item failed unless its retry budget
//     was spent (stuck = 0);
//   - every finished attempt has an outcome, and every commit came from the item's last, succeeded attempt while its
//     lease was alive (an attempt whose claim went stale never commits);
//   - the scheduler lease row, sampled every ~100 ms, never had two overlapping holders and its fence only grew.
//
// Run it with `make e2e` (short variant, also part of `make test`), `make e2e E2E_LONG=1` (long variant, plus the
// broken-build round) or `E2E_BROKEN=1 make e2e` (adds the broken-build round to the short variant). The broken
// round builds the binary with `-tags unsafe_nofence`, which removes the claim verification in
// coordinator.Ledger.Complete and the cursor compare-and-set in sources.Advance, and asserts that the same harness
// then reports duplicates. `go test -short` skips everything here. Linux only (SIGSTOP, Pdeathsig). Process logs go
// to a temporary directory that is kept (and listed) when a round fails, or always with E2E_KEEP_LOGS=1.
package e2e
