-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Skills (docs/skills.md): approved Experience packaged for coding agents. A skill is one name per scope with its
-- current revision; every revision keeps its package archive (rollback publishes an older one). A target is one
-- agent installation, enrolled with a one-time token and then known by its own credential (both stored only as
-- SHA-256 digests). A publication is the desired state of one skill on one target and what the agent last reported.
-- A scope erase deletes all four tables' rows of the scope.
CREATE TABLE pc_skills (
    scope_id         text        COLLATE "C" NOT NULL,
    skill_name       varchar(64) COLLATE "C" NOT NULL,
    current_revision bigint      NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    CONSTRAINT pc_skills_pkey PRIMARY KEY (scope_id, skill_name),
    CONSTRAINT pc_skills_name_check CHECK (char_length(skill_name) BETWEEN 1 AND 64),
    CONSTRAINT pc_skills_current_revision_check CHECK (current_revision >= 1)
);
CREATE TABLE pc_skill_revisions (
    scope_id             text        COLLATE "C" NOT NULL,
    skill_name           varchar(64) COLLATE "C" NOT NULL,
    revision             bigint      NOT NULL,
    tree_digest          char(64)    COLLATE "C" NOT NULL,
    archive_digest       char(64)    COLLATE "C" NOT NULL,
    file_count           integer     NOT NULL,
    byte_size            bigint      NOT NULL,
    archive              bytea       NOT NULL,
    source_candidate_ids bytea       NOT NULL,
    created_at           timestamptz NOT NULL,
    CONSTRAINT pc_skill_revisions_pkey PRIMARY KEY (scope_id, skill_name, revision),
    CONSTRAINT pc_skill_revisions_revision_check CHECK (revision >= 1),
    CONSTRAINT pc_skill_revisions_file_count_check CHECK (file_count BETWEEN 1 AND 64),
    CONSTRAINT pc_skill_revisions_byte_size_check CHECK (byte_size BETWEEN 1 AND 1048576),
    CONSTRAINT pc_skill_revisions_archive_check CHECK (octet_length(archive) BETWEEN 1 AND 2097152)
);
CREATE TABLE pc_skill_targets (
    target_id             uuid         NOT NULL,
    scope_id              text         COLLATE "C" NOT NULL,
    agent_kind            varchar(32)  COLLATE "C" NOT NULL,
    display_name          varchar(128) NOT NULL,
    enrollment_digest     char(64)     COLLATE "C",
    enrollment_expires_at timestamptz,
    credential_digest     char(64)     COLLATE "C",
    revoked_at            timestamptz,
    generation            bigint       NOT NULL,
    created_at            timestamptz  NOT NULL,
    updated_at            timestamptz  NOT NULL,
    CONSTRAINT pc_skill_targets_pkey PRIMARY KEY (target_id),
    CONSTRAINT pc_skill_targets_enrollment_key UNIQUE (enrollment_digest),
    CONSTRAINT pc_skill_targets_credential_key UNIQUE (credential_digest),
    CONSTRAINT pc_skill_targets_generation_check CHECK (generation >= 1)
);
CREATE INDEX pc_skill_targets_scope_idx ON pc_skill_targets (scope_id, created_at);
CREATE TABLE pc_skill_publications (
    target_id            uuid        NOT NULL,
    skill_name           varchar(64) COLLATE "C" NOT NULL,
    scope_id             text        COLLATE "C" NOT NULL,
    desired_state        varchar(16) COLLATE "C" NOT NULL,
    desired_revision     bigint      NOT NULL,
    observed_revision    bigint,
    observed_tree_digest char(64)    COLLATE "C",
    error_code           varchar(64) COLLATE "C",
    state                varchar(32) COLLATE "C" NOT NULL,
    generation           bigint      NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    CONSTRAINT pc_skill_publications_pkey PRIMARY KEY (target_id, skill_name),
    CONSTRAINT pc_skill_publications_desired_state_check CHECK (desired_state IN ('published', 'unpublished')),
    CONSTRAINT pc_skill_publications_state_check CHECK (state IN ('pending', 'current', 'update_available',
        'delivery_failed', 'conflict', 'drifted', 'incompatible')),
    CONSTRAINT pc_skill_publications_generation_check CHECK (generation >= 1)
);
CREATE INDEX pc_skill_publications_scope_skill_idx ON pc_skill_publications (scope_id, skill_name);
