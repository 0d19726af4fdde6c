-- Engine-only (postgres): no lock; the schema the session works in (the listener keeps only its own schema's notifications).
-- name: CurrentSchema :one
SELECT coalesce(current_schema(), '')::text AS schema_name;

-- No lock; reads the database clock (clock_timestamp(), not now(): now() is frozen at transaction start).
-- name: DBNow :one
SELECT clock_timestamp()::timestamptz AS db_now;

-- Engine-only (postgres): no lock; registers the listener's dedicated session for pc_work_enqueued (docs/protocol.md#wake-ups), once per (re)connect.
-- name: ListenWorkEnqueued :exec
LISTEN pc_work_enqueued;

-- Engine-only (postgres): no lock; as ListenWorkEnqueued, for pc_work_finished.
-- name: ListenWorkFinished :exec
LISTEN pc_work_finished;

-- Engine-only (postgres): guard: delivered only if its transaction commits, whose commit takes the notification queue's lock, so callers pace it (one in flight per process and channel); payload: the session's schema, never content.
-- name: WorkNotify :exec
SELECT pg_notify(sqlc.arg('channel')::text, coalesce(current_schema(), '')::text);
