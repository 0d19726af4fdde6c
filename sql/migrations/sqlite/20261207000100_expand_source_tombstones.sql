-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Forgetting a Source (docs/protocol.md#forgetting-and-erasing) erases its content at once but keeps its row as a
-- tombstone, so journal positions stay dense: content may now be empty, and erased_at records when it was erased.
-- An Experience candidate citing a forgotten Source is withdrawn: status 'withdrawn'.
-- SQLite cannot change a CHECK constraint in place: both tables are rebuilt (create, copy, drop, rename) inside the
-- migration's transaction, and the candidates' index is created again. No table refers to either.
CREATE TABLE pc_sources_new (
    scope_id         TEXT        NOT NULL,
    journal_position INTEGER      NOT NULL,
    source_id        TEXT        NOT NULL,
    source_type      TEXT        NOT NULL,
    content          TEXT        NOT NULL,
    metadata         BLOB        NOT NULL,
    created_at       INTEGER      NOT NULL,
    erased_at        INTEGER     ,
    CONSTRAINT pc_sources_pkey PRIMARY KEY (scope_id, journal_position),
    CONSTRAINT pc_sources_source_key UNIQUE (scope_id, source_id),
    CONSTRAINT pc_sources_journal_position_check CHECK (journal_position > 0),
    CONSTRAINT pc_sources_source_id_check CHECK (length(CAST(source_id AS BLOB)) BETWEEN 1 AND 256),
    CONSTRAINT pc_sources_content_check CHECK (length(CAST(content AS BLOB)) BETWEEN 0 AND 65536)
);
INSERT INTO pc_sources_new (scope_id, journal_position, source_id, source_type, content, metadata, created_at)
SELECT scope_id, journal_position, source_id, source_type, content, metadata, created_at FROM pc_sources;
DROP TABLE pc_sources;
ALTER TABLE pc_sources_new RENAME TO pc_sources;
CREATE TABLE pc_experience_candidates_new (
    candidate_id    TEXT         NOT NULL,
    scope_id        TEXT         NOT NULL,
    work_id         TEXT         NOT NULL,
    title           TEXT         NOT NULL,
    lesson          TEXT         NOT NULL,
    cited_positions BLOB         NOT NULL,
    status          TEXT         NOT NULL,
    state_version   INTEGER       NOT NULL,
    created_at      INTEGER       NOT NULL,
    updated_at      INTEGER       NOT NULL,
    CONSTRAINT pc_experience_candidates_pkey PRIMARY KEY (candidate_id),
    CONSTRAINT pc_experience_candidates_status_check CHECK (status IN ('pending', 'approved', 'rejected', 'withdrawn')),
    CONSTRAINT pc_experience_candidates_state_version_check CHECK (state_version > 0)
);
INSERT INTO pc_experience_candidates_new (candidate_id, scope_id, work_id, title, lesson, cited_positions, status, state_version, created_at, updated_at)
SELECT candidate_id, scope_id, work_id, title, lesson, cited_positions, status, state_version, created_at, updated_at FROM pc_experience_candidates;
DROP TABLE pc_experience_candidates;
ALTER TABLE pc_experience_candidates_new RENAME TO pc_experience_candidates;
CREATE INDEX pc_experience_candidates_scope_status_idx ON pc_experience_candidates (scope_id, status, created_at);
