// Package app is the composition root of the powercontext binary: configuration, validation, logging setup, the
// runtime that wires one process, the server commands (`server run`, `server migrate`, `server health`, `server
// copy`) and the root command that also carries the HTTP client commands of package cli
// (docs/architecture.md#packages).
//
// It is the only package that chooses a database engine: OpenStore and OpenSQLDB turn a database URL into the
// adapter of its engine through db/dbopen; every package below works on the engine-neutral db types
// (docs/architecture.md#engines).
//
// Configuration. Every server setting is defined once, in Config (config.go): a flag of `server run` and an
// environment variable POWERCONTEXT_<GROUP>_<FIELD> (docs/architecture.md#configuration). Config.Validate holds the
// startup refusals: a configuration it refuses is a *ConfigError, reported as one line with exit code 2 before
// anything is opened. Problems Start finds later — the database cannot be reached, a schema this binary cannot run
// against, another single_node runtime holding the database, a listen address taken — end the process with exit
// code 1 (README.md#exit-codes).
//
// Roles. The deployment mode and role select what a process runs (docs/architecture.md#roles):
//
//   - all (single_node only): the HTTP API, MCP, the dashboard, the scheduler and a worker in one process, which
//     migrates its database at start and holds the single-node-runtime lease;
//   - api (distributed): the HTTP API, stateless MCP and the dashboard;
//   - scheduler (distributed): the leader-elected scheduler (discovery and maintenance);
//   - worker (distributed): a worker with every handler and the configured provider.
//
// Every role registers as a member, serves health and metrics, and in distributed mode only verifies the schema
// revision (README.md#rolling-upgrades).
//
// The runtime, by file:
//
//   - runtime.go: the Runtime type and Start, which opens the database, migrates or verifies the schema, registers
//     the member and wires the parts the role runs (the provider, the worker's handlers, the scheduler's
//     discoverers, the HTTP API, MCP and the dashboard);
//   - shutdown.go: Run, which serves and then stops the process in stages (docs/architecture.md#shutdown), and the
//     undoing of a Start that failed;
//   - readiness.go: Readiness, the checks behind /health/ready (docs/architecture.md#observability).
//
// How the roles are deployed — the image, compose fleets, Kubernetes, database accounts, upgrades — is in
// docs/deployment.md.
package app
