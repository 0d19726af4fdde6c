-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- An attempt may end 'snoozed': a shared limit (a provider's 429, the shared provider rate limiter) said "not now",
-- and the item went back to retry_wait without spending its retry budget (docs/protocol.md#snooze).
-- Two statements, each safe to resume at (DDL commits implicitly on MySQL-mode servers). DROP CONSTRAINT is the
-- spelling MariaDB (>= 10.2) and MySQL (>= 8.0.19) share; MySQL's DROP CHECK is unknown to MariaDB.
ALTER TABLE pc_work_attempts DROP CONSTRAINT pc_work_attempts_outcome_check;
ALTER TABLE pc_work_attempts ADD CONSTRAINT pc_work_attempts_outcome_check CHECK (outcome IN ('succeeded', 'retry_wait', 'snoozed', 'failed', 'cancelled', 'lease_expired_retry', 'lease_expired_failed'));
