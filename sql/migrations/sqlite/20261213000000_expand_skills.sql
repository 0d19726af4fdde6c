-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Skills (docs/skills.md): approved Experience packaged for coding agents. A skill is one name per scope with its
-- current revision; every revision keeps its package archive (rollback publishes an older one). A target is one
-- agent installation, enrolled with a one-time token and then known by its own credential (both stored only as
-- SHA-256 digests). A publication is the desired state of one skill on one target and what the agent last reported.
-- A scope erase deletes all four tables' rows of the scope.
CREATE TABLE pc_skills (
    scope_id         TEXT    NOT NULL,
    skill_name       TEXT    NOT NULL,
    current_revision INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    CONSTRAINT pc_skills_pkey PRIMARY KEY (scope_id, skill_name),
    CONSTRAINT pc_skills_name_check CHECK (length(skill_name) BETWEEN 1 AND 64),
    CONSTRAINT pc_skills_current_revision_check CHECK (current_revision >= 1)
);
CREATE TABLE pc_skill_revisions (
    scope_id             TEXT    NOT NULL,
    skill_name           TEXT    NOT NULL,
    revision             INTEGER NOT NULL,
    tree_digest          TEXT    NOT NULL,
    archive_digest       TEXT    NOT NULL,
    file_count           INTEGER NOT NULL,
    byte_size            INTEGER NOT NULL,
    archive              BLOB    NOT NULL,
    source_candidate_ids BLOB    NOT NULL,
    created_at           INTEGER NOT NULL,
    CONSTRAINT pc_skill_revisions_pkey PRIMARY KEY (scope_id, skill_name, revision),
    CONSTRAINT pc_skill_revisions_revision_check CHECK (revision >= 1),
    CONSTRAINT pc_skill_revisions_file_count_check CHECK (file_count BETWEEN 1 AND 64),
    CONSTRAINT pc_skill_revisions_byte_size_check CHECK (byte_size BETWEEN 1 AND 1048576),
    CONSTRAINT pc_skill_revisions_archive_check CHECK (length(archive) BETWEEN 1 AND 2097152)
);
CREATE TABLE pc_skill_targets (
    target_id             TEXT    NOT NULL,
    scope_id              TEXT    NOT NULL,
    agent_kind            TEXT    NOT NULL,
    display_name          TEXT    NOT NULL,
    enrollment_digest     TEXT,
    enrollment_expires_at INTEGER,
    credential_digest     TEXT,
    revoked_at            INTEGER,
    generation            INTEGER NOT NULL,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    CONSTRAINT pc_skill_targets_pkey PRIMARY KEY (target_id),
    CONSTRAINT pc_skill_targets_generation_check CHECK (generation >= 1)
);
CREATE UNIQUE INDEX pc_skill_targets_enrollment_key ON pc_skill_targets (enrollment_digest);
CREATE UNIQUE INDEX pc_skill_targets_credential_key ON pc_skill_targets (credential_digest);
CREATE INDEX pc_skill_targets_scope_idx ON pc_skill_targets (scope_id, created_at);
CREATE TABLE pc_skill_publications (
    target_id            TEXT    NOT NULL,
    skill_name           TEXT    NOT NULL,
    scope_id             TEXT    NOT NULL,
    desired_state        TEXT    NOT NULL,
    desired_revision     INTEGER NOT NULL,
    observed_revision    INTEGER,
    observed_tree_digest TEXT,
    error_code           TEXT,
    state                TEXT    NOT NULL,
    generation           INTEGER NOT NULL,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL,
    CONSTRAINT pc_skill_publications_pkey PRIMARY KEY (target_id, skill_name),
    CONSTRAINT pc_skill_publications_desired_state_check CHECK (desired_state IN ('published', 'unpublished')),
    CONSTRAINT pc_skill_publications_state_check CHECK (state IN ('pending', 'current', 'update_available',
        'delivery_failed', 'conflict', 'drifted', 'incompatible')),
    CONSTRAINT pc_skill_publications_generation_check CHECK (generation >= 1)
);
CREATE INDEX pc_skill_publications_scope_skill_idx ON pc_skill_publications (scope_id, skill_name);
