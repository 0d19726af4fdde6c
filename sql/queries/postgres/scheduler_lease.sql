-- No lock; plain read of one lease.
-- name: SchedulerLeaseGet :one
SELECT *
FROM pc_scheduler_leases
WHERE lease_name = sqlc.arg('lease_name');

-- Guard: unique lease_name; creates an unowned lease (fence 0) stamped with the database clock.
-- name: SchedulerLeaseInsertIfAbsent :execrows
INSERT INTO pc_scheduler_leases (lease_name, owner_id, fence, lease_expires_at, updated_at)
VALUES (sqlc.arg('lease_name'), NULL, 0, NULL, clock_timestamp())
ON CONFLICT DO NOTHING;

-- Lock: the lease row (FOR UPDATE), first in the global lock order; returns the database clock from the same statement.
-- name: SchedulerLeaseLock :one
SELECT sqlc.embed(pc_scheduler_leases), clock_timestamp()::timestamptz AS db_now
FROM pc_scheduler_leases
WHERE lease_name = sqlc.arg('lease_name')
FOR UPDATE;

-- Guard: caller holds the lease lock; writes owner, fence, expiry and updated_at.
-- name: SchedulerLeaseUpdate :execrows
UPDATE pc_scheduler_leases
SET owner_id = sqlc.narg('owner_id'),
    fence = sqlc.arg('fence'),
    lease_expires_at = sqlc.narg('lease_expires_at'),
    updated_at = sqlc.arg('updated_at')
WHERE lease_name = sqlc.arg('lease_name');
