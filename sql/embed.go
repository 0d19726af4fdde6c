// Package sqlfiles embeds the SQL sources of the service: the forward-only Atlas migration directories (applied by
// `powercontext server migrate` and by single_node at start), and, for tests, the desired-state schemas and the
// query files.
package sqlfiles

import "embed"

// Migrations holds migrations/<engine>/*.sql and migrations/<engine>/atlas.sum.
//
//go:embed migrations
var Migrations embed.FS

// Schema holds schema/<engine>/schema.sql, the desired state the migrations must produce (drift tests).
//
//go:embed schema
var Schema embed.FS

// Queries holds queries/<engine>/<family>.sql (tests compare the file and query-name sets across engines).
//
//go:embed queries
var Queries embed.FS
