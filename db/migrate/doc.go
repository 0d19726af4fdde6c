// Package migrate applies the forward-only Atlas migration directories embedded in the binary
// (sql/migrations/<engine>/, see package sqlfiles) and verifies a database's schema revision. It is engine-neutral:
// statements run over database/sql, the directory logic (atlas.sum integrity, statement splitting, hashes) is the
// ariga.io/atlas library's, and the lease goes through db.Store.
//
// # One history with the Atlas CLI
//
// Revisions are recorded in atlas_schema_revisions with exactly the Atlas CLI's layout and semantics (version,
// description, type = 2 "applied", applied/total statement counts, executed_at, execution_time in nanoseconds,
// error, error_stmt, hash = the file's atlas.sum hash, partial_hashes = the cumulative "h1:" statement hashes of a
// partially applied file, operator_version). The table lives in the connected schema: the PostgreSQL
// current_schema() (search_path), the MySQL database of the URL, SQLite's main database. That is where the Atlas CLI
// keeps it for a schema-bound URL, so `powercontext server migrate` and a DBA's `atlas migrate apply --env <engine>`
// (atlas.hcl) continue one history. For PostgreSQL the Atlas URL must therefore carry search_path (for example
// `?search_path=public`); without it Atlas would look in a schema named atlas_schema_revisions instead.
//
// # Invariants
//
//   - The embedded directory must match its atlas.sum before anything runs: an applied migration edited without a
//     rehash fails with a *ChecksumError naming the file. A rehashed edit of an applied file is caught too: the hash
//     recorded for an applied revision must equal the file's current atlas.sum hash (a *HistoryChangedError).
//   - Files apply in version order, one at a time. History is linear: a file whose version is below the latest
//     applied revision but was never applied is refused (*NonLinearError), as the Atlas CLI does by default.
//   - PostgreSQL and SQLite apply each file in one transaction together with its revision row, so a failure leaves
//     no trace. MySQL/OceanBase DDL commits implicitly, so each statement is followed by an autocommitted revision
//     update (applied count and partial hashes), and a failure records error and error_stmt. A PostgreSQL or SQLite
//     file that starts with the Atlas directive `-- atlas:txmode none` (needed by CREATE/DROP INDEX CONCURRENTLY)
//     runs the same way, statement by statement; any other txmode value is refused before anything runs. Such a "dirty"
//     revision blocks every later file: the next run re-checks the partial hashes of the statements already applied
//     and resumes at the failed statement (Atlas semantics); it never skips it. Verify refuses a dirty database.
//   - A new revision row is INSERTed before the file's first statement runs (a claim on the version): a concurrent
//     run that reaches the same version fails on the primary key instead of overwriting the other run's progress.
//   - Apply runs under the `schema-migration` lease in pc_scheduler_leases (600 s, database time, fence +1 on
//     takeover, renewed between files and every 150 s while a file runs, released by clearing owner and expiry but
//     keeping the fence); a renewal that finds it taken over cancels the running statement. A second
//     `server migrate` while the lease is held fails with *LeaseHeldError.
//   - The lease table is created by the baseline migration, so on an empty database the baseline (and only the
//     files up to the one that creates pc_scheduler_leases) runs before the lease can exist. Two concurrent first
//     runs are therefore not serialised by the lease: the loser fails cleanly (on CREATE TABLE or on the revision
//     claim) and a rerun is idempotent. Every later run holds the lease before it reads the revisions.
//   - Idempotent: a run with nothing pending changes nothing but the lease row and reports NothingPending.
//   - Verify and Status only read; they never create the revisions table (distributed roles run with the
//     application account, which has no DDL privileges). That account needs SELECT on atlas_schema_revisions; on
//     MySQL a table the account cannot see at all reads as "no migration applied" (behind).
package migrate
