-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- An attempt may end 'snoozed': a shared limit (a provider's 429, the shared provider rate limiter) said "not now",
-- and the item went back to retry_wait without spending its retry budget (docs/protocol.md#snooze).
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt (create, copy, drop, rename) inside the
-- migration's transaction. pc_work_attempts has no index besides its primary key and no table refers to it.
CREATE TABLE pc_work_attempts_new (
    work_id             TEXT         NOT NULL,
    attempt_no          INTEGER      NOT NULL,
    recovery_generation INTEGER      NOT NULL,
    owner_id            TEXT         NOT NULL,
    fence               INTEGER       NOT NULL,
    started_at          INTEGER       NOT NULL,
    heartbeat_at        INTEGER     ,
    finished_at         INTEGER     ,
    outcome             TEXT        ,
    error_category      TEXT        ,
    error_code          TEXT        ,
    trace_id            TEXT        ,
    span_id             TEXT        ,
    CONSTRAINT pc_work_attempts_pkey PRIMARY KEY (work_id, attempt_no),
    CONSTRAINT pc_work_attempts_attempt_no_check CHECK (attempt_no > 0),
    CONSTRAINT pc_work_attempts_outcome_check CHECK (outcome IN ('succeeded', 'retry_wait', 'snoozed', 'failed', 'cancelled', 'lease_expired_retry', 'lease_expired_failed'))
);
INSERT INTO pc_work_attempts_new (
    work_id, attempt_no, recovery_generation, owner_id, fence, started_at, heartbeat_at, finished_at, outcome,
    error_category, error_code, trace_id, span_id
) SELECT
    work_id, attempt_no, recovery_generation, owner_id, fence, started_at, heartbeat_at, finished_at, outcome,
    error_category, error_code, trace_id, span_id
FROM pc_work_attempts;
DROP TABLE pc_work_attempts;
ALTER TABLE pc_work_attempts_new RENAME TO pc_work_attempts;
