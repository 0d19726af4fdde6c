-- No lock; autocommitted read.
-- name: SchedulerLeaseGet :one
SELECT lease_name, owner_id, fence, lease_expires_at, updated_at
FROM pc_scheduler_leases
WHERE lease_name = sqlc.arg('lease_name');

-- Unique key lease_name; creates an unowned lease (fence 0) stamped with the database clock; an existing row is left untouched.
-- name: SchedulerLeaseInsertIfAbsent :execrows
INSERT OR IGNORE INTO pc_scheduler_leases (lease_name, owner_id, fence, lease_expires_at, updated_at)
VALUES (sqlc.arg('lease_name'), NULL, 0, NULL, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000);

-- Lease lock plus the database clock from the same statement. Differs from postgres because SQLite has no FOR UPDATE: a plain read inside the BEGIN IMMEDIATE transaction, which already holds the database write lock.
-- name: SchedulerLeaseLock :one
SELECT sqlc.embed(pc_scheduler_leases), CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000 AS db_now
FROM pc_scheduler_leases
WHERE lease_name = sqlc.arg('lease_name');

-- Guard: caller holds the lease lock (SchedulerLeaseLock in the same transaction); rows = 0 means the lease does not exist.
-- name: SchedulerLeaseUpdate :execrows
UPDATE pc_scheduler_leases
SET owner_id = sqlc.narg('owner_id'),
    fence = sqlc.arg('fence'),
    lease_expires_at = sqlc.narg('lease_expires_at'),
    updated_at = sqlc.arg('updated_at')
WHERE lease_name = sqlc.arg('lease_name');
