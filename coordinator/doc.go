/*
Package coordinator is the Work Ledger protocol (docs/protocol.md), written once over the engine-neutral db.Store.

# What the ledger stores

A work item is one logical window of background work ("operation"). Items live in lanes: every item of a lane has
a sequence number from the lane's allocator (next_sequence), and the lane's head_sequence names the only item of
the lane that may run. A logical key (sha256 of the window's identity) maps to at most one live item, so a manual
flush and a scheduled scan of the same window join one item instead of creating two.

# State machine

	∅ ──enqueue──▶ queued ──claim──▶ running ──complete──▶ succeeded   (key deleted, head advances)
	                 ▲                 │  │ ╲
	                 │        fail(retryable, budget left) ╲ cancel
	                 │                 ▼  │               ▼
	                 └──claim──── retry_wait   │        cancelling ──worker / expiry──▶ cancelled
	                                      fail(no retry / budget spent)
	                                           ▼
	               retry (operator) ◀──── failed      (key and head stay: the lane is blocked)

queued, retry_wait and failed items can also be cancelled directly by an operator. An expired running lease is
recovered by any claim pass: lease_expired_retry (→ retry_wait, available now), lease_expired_failed (→ failed),
or cancelled when cancel was requested. Only succeeded and cancelled are terminal for the lane.

# Invariants

  - One owner per claim. A claim is (owner, fence, attempt). Every claim raises lease_fence by one, so a deposed
    worker's claim never matches again; complete, fail, heartbeat and cancel-confirm verify (status, owner,
    fence, attempt, lease unexpired) against the locked row in the same transaction and fail with
    ErrStaleWorkClaim otherwise.
  - Lanes are strictly ordered. Only the head is claimable; the head moves only when the head item becomes
    succeeded or cancelled, to the lowest later sequence that is not terminal.
  - At most one domain commit per window. The domain commit runs inside Complete's transaction after the claim is
    verified, and itself compare-and-sets the domain cursor, so a stale attempt can neither commit nor double
    commit; a lost response is detected by the next attempt as already_committed.
  - Database time only. Every expiry and availability decision uses the clock read by the database inside the
    same transaction (returned by the locking read of the item or lease). The process clock only paces loops.
    The locking read returns the clock from the same statement; because the lane lock is taken first, the item
    lock itself almost never waits, and when it does (a heartbeat holds it) the earlier clock only errs towards
    "not yet expired", which is safe: takeover needs the same row lock, so whichever transaction locks first wins.
  - One global lock order: scheduler lease → lane → logical key → work item → domain cursor. Every path takes
    locks in this direction, a prefix-free subset of it, and never upward; several lanes are locked in ascending
    lane_key order. The protocol is therefore deadlock-free by construction, and an engine deadlock error is
    returned (never retried) so tests expose it.
  - state_version increases by one on every status or ownership change and never on heartbeats, so an operator's
    expected_version stays valid while a long model call runs.
  - No provider or network call runs inside a transaction: handlers prepare outside, and only the domain commit
    runs in the final transaction.
  - Rows that will be locked but may not exist yet (lanes, leases) are created by an autocommitted
    insert-if-absent before the locking transaction, which is then run again (the InnoDB duplicate-key trap).
*/
package coordinator
