-- Engine-only (mysql): No lock; the guard of a write sent with the COMMIT in one multi-statement (db/mysqlstore/atcommit.go): unless the statement just before it matched exactly expected rows (ROW_COUNT() counts rows matched on these CLIENT_FOUND_ROWS sessions), its subquery returns two rows and fails it with error 1242, and the server runs nothing after it, the COMMIT included.
-- name: DBAssertRowCount :exec
SELECT IF(ROW_COUNT() = CAST(sqlc.arg('expected') AS SIGNED), 0, (SELECT 1 UNION ALL SELECT 2)) AS matched_expected;

-- No lock; reads the database clock (UTC: every session runs with time_zone = '+00:00').
-- name: DBNow :one
SELECT CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now;
