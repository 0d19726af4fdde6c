-- No lock. Differs from postgres because SQLite's clock is unix microseconds UTC with millisecond resolution.
-- name: DBNow :one
SELECT CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000 AS db_now;
