-- No lock; plain read of one lease.
-- name: SchedulerLeaseGet :one
SELECT lease_name, owner_id, fence, lease_expires_at, updated_at
FROM pc_scheduler_leases
WHERE lease_name = sqlc.arg('lease_name');

-- Guard: primary key; run autocommitted before the locking transaction (docs/protocol.md#creating-rows). Inserted = rows == 1.
-- name: SchedulerLeaseInsertIfAbsent :execrows
INSERT IGNORE INTO pc_scheduler_leases (lease_name, owner_id, fence, lease_expires_at, updated_at)
VALUES (sqlc.arg('lease_name'), NULL, 0, NULL, CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)));

-- Lease row lock (FOR UPDATE), taken after SchedulerLeaseTouch; returns the database clock from the same statement.
-- name: SchedulerLeaseLock :one
SELECT sqlc.embed(pc_scheduler_leases), CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now
FROM pc_scheduler_leases
WHERE lease_name = sqlc.arg('lease_name')
FOR UPDATE;

-- Engine-only (mysql): Lease row lock via a no-op update, run by the adapter before the FOR UPDATE read, because OceanBase starts the transaction and the row lock only on a write.
-- name: SchedulerLeaseTouch :execrows
UPDATE pc_scheduler_leases SET lease_name = lease_name WHERE lease_name = sqlc.arg('lease_name');

-- Requires the lease lock (SchedulerLeaseLock) held by the caller; 0 rows (no such lease) becomes db.ErrNotFound.
-- name: SchedulerLeaseUpdate :execrows
UPDATE pc_scheduler_leases
SET owner_id = sqlc.narg('owner_id'),
    fence = sqlc.arg('fence'),
    lease_expires_at = sqlc.narg('lease_expires_at'),
    updated_at = sqlc.arg('updated_at')
WHERE lease_name = sqlc.arg('lease_name');
