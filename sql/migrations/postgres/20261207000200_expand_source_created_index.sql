-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Retention (docs/protocol.md#retention) erases the content of consumed Sources older than a cut-off in batches,
-- oldest first: it reads pc_sources in created_at order through this index instead of scanning the table.
CREATE INDEX pc_sources_created_idx ON pc_sources (created_at);
