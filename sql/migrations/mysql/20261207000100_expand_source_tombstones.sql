-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Forgetting a Source (docs/protocol.md#forgetting-and-erasing) erases its content at once but keeps its row as a
-- tombstone, so journal positions stay dense: content may now be empty, and erased_at records when it was erased.
-- An Experience candidate citing a forgotten Source is withdrawn: status 'withdrawn'.
-- One change per statement, each safe to resume at (DDL commits implicitly on MySQL-mode servers).
ALTER TABLE pc_sources ADD COLUMN erased_at DATETIME(6) NULL;
ALTER TABLE pc_sources DROP CONSTRAINT pc_sources_content_check;
ALTER TABLE pc_sources ADD CONSTRAINT pc_sources_content_check CHECK (LENGTH(content) BETWEEN 0 AND 65536);
ALTER TABLE pc_experience_candidates DROP CONSTRAINT pc_experience_candidates_status_check;
ALTER TABLE pc_experience_candidates ADD CONSTRAINT pc_experience_candidates_status_check CHECK (status IN ('pending', 'approved', 'rejected', 'withdrawn'));
