-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- An attempt may end 'snoozed': a shared limit (a provider's 429, the shared provider rate limiter) said "not now",
-- and the item went back to retry_wait without spending its retry budget (docs/protocol.md#snooze).
-- One ALTER, so there is no moment without the constraint; it holds the table's ACCESS EXCLUSIVE lock while it
-- scans pc_work_attempts once to validate the wider check.
ALTER TABLE pc_work_attempts
    DROP CONSTRAINT pc_work_attempts_outcome_check,
    ADD CONSTRAINT pc_work_attempts_outcome_check CHECK (outcome IN ('succeeded', 'retry_wait', 'snoozed', 'failed', 'cancelled', 'lease_expired_retry', 'lease_expired_failed'));
