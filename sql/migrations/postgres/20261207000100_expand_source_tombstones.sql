-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Forgetting a Source (docs/protocol.md#forgetting-and-erasing) erases its content at once but keeps its row as a
-- tombstone, so journal positions stay dense: content may now be empty, and erased_at records when it was erased.
-- An Experience candidate citing a forgotten Source is withdrawn: status 'withdrawn'.
ALTER TABLE pc_sources ADD COLUMN erased_at timestamptz NULL;
ALTER TABLE pc_sources
    DROP CONSTRAINT pc_sources_content_check,
    ADD CONSTRAINT pc_sources_content_check CHECK (octet_length(content) BETWEEN 0 AND 65536);
ALTER TABLE pc_experience_candidates
    DROP CONSTRAINT pc_experience_candidates_status_check,
    ADD CONSTRAINT pc_experience_candidates_status_check CHECK (status IN ('pending', 'approved', 'rejected', 'withdrawn'));
