-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Skills (docs/skills.md): approved Experience packaged for coding agents. A skill is one name per scope with its
-- current revision; every revision keeps its package archive (rollback publishes an older one). A target is one
-- agent installation, enrolled with a one-time token and then known by its own credential (both stored only as
-- SHA-256 digests). A publication is the desired state of one skill on one target and what the agent last reported.
-- A scope erase deletes all four tables' rows of the scope.
CREATE TABLE pc_skills (
    scope_id         VARBINARY(256) NOT NULL,
    skill_name       VARCHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    current_revision BIGINT         NOT NULL,
    created_at       DATETIME(6)    NOT NULL,
    updated_at       DATETIME(6)    NOT NULL,
    PRIMARY KEY (scope_id, skill_name),
    CONSTRAINT pc_skills_name_check CHECK (CHAR_LENGTH(skill_name) BETWEEN 1 AND 64),
    CONSTRAINT pc_skills_current_revision_check CHECK (current_revision >= 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE pc_skill_revisions (
    scope_id             VARBINARY(256) NOT NULL,
    skill_name           VARCHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    revision             BIGINT         NOT NULL,
    tree_digest          CHAR(64)       CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    archive_digest       CHAR(64)       CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    file_count           INT            NOT NULL,
    byte_size            BIGINT         NOT NULL,
    archive              MEDIUMBLOB     NOT NULL,
    source_candidate_ids MEDIUMBLOB     NOT NULL,
    created_at           DATETIME(6)    NOT NULL,
    PRIMARY KEY (scope_id, skill_name, revision),
    CONSTRAINT pc_skill_revisions_revision_check CHECK (revision >= 1),
    CONSTRAINT pc_skill_revisions_file_count_check CHECK (file_count BETWEEN 1 AND 64),
    CONSTRAINT pc_skill_revisions_byte_size_check CHECK (byte_size BETWEEN 1 AND 1048576),
    CONSTRAINT pc_skill_revisions_archive_check CHECK (LENGTH(archive) BETWEEN 1 AND 2097152)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE pc_skill_targets (
    target_id             CHAR(36)       CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    scope_id              VARBINARY(256) NOT NULL,
    agent_kind            VARCHAR(32)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    display_name          VARCHAR(128)   CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    enrollment_digest     VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
    enrollment_expires_at DATETIME(6)    NULL,
    credential_digest     VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
    revoked_at            DATETIME(6)    NULL,
    generation            BIGINT         NOT NULL,
    created_at            DATETIME(6)    NOT NULL,
    updated_at            DATETIME(6)    NOT NULL,
    PRIMARY KEY (target_id),
    UNIQUE KEY pc_skill_targets_enrollment_key (enrollment_digest),
    UNIQUE KEY pc_skill_targets_credential_key (credential_digest),
    KEY pc_skill_targets_scope_idx (scope_id, created_at),
    CONSTRAINT pc_skill_targets_generation_check CHECK (generation >= 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE pc_skill_publications (
    target_id            CHAR(36)       CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    skill_name           VARCHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    scope_id             VARBINARY(256) NOT NULL,
    desired_state        VARCHAR(16)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    desired_revision     BIGINT         NOT NULL,
    observed_revision    BIGINT         NULL,
    observed_tree_digest VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
    error_code           VARCHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NULL,
    state                VARCHAR(32)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    generation           BIGINT         NOT NULL,
    created_at           DATETIME(6)    NOT NULL,
    updated_at           DATETIME(6)    NOT NULL,
    PRIMARY KEY (target_id, skill_name),
    KEY pc_skill_publications_scope_skill_idx (scope_id, skill_name),
    CONSTRAINT pc_skill_publications_desired_state_check CHECK (desired_state IN ('published', 'unpublished')),
    CONSTRAINT pc_skill_publications_state_check CHECK (state IN ('pending', 'current', 'update_available',
        'delivery_failed', 'conflict', 'drifted', 'incompatible')),
    CONSTRAINT pc_skill_publications_generation_check CHECK (generation >= 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
