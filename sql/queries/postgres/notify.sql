-- No lock: registers the listener's own session on the notification queue (docs/protocol.md#wake-ups); the
-- listener's dedicated connection runs it once per (re)connect.
-- name: ListenWorkEnqueued :exec
LISTEN pc_work_enqueued;

-- No lock: as ListenWorkEnqueued, for the finished channel.
-- name: ListenWorkFinished :exec
LISTEN pc_work_finished;

-- Guard: delivered only if its transaction commits; that commit takes the notification queue's lock, so callers
-- pace it (one in flight per process and channel). Channel is one of the two names above, payload always empty.
-- name: WorkNotify :exec
SELECT pg_notify(sqlc.arg('channel')::text, '');
