-- No lock; reads the database clock (clock_timestamp(), not now(): now() is frozen at transaction start).
-- name: DBNow :one
SELECT clock_timestamp()::timestamptz AS db_now;
