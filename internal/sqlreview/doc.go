// Package sqlreview is the DBA review kit's tooling (docs/deployment.md#reviewing-sql): it reads the query files
// (sql/queries/<engine>/*.sql) the way sqlc does, seeds a scratch database with a realistic row count, and explains
// every query on it. Its tests are `make sql-vet` (sqlc vet's plan rules on PostgreSQL), the plan test and
// `make sql-review`/`make sql-review-check` (docs/sql-review/<engine>.md). It is review tooling, never the service.
package sqlreview
