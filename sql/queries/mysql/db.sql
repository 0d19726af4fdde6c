-- No lock; reads the database clock (UTC: every session runs with time_zone = '+00:00').
-- name: DBNow :one
SELECT CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now;
