-- powercontext desired schema, MySQL mode (OceanBase 4.3.5; MariaDB >= 10.6 and MySQL 8 are tested stand-ins).
-- Times are DATETIME(6) holding UTC (every session runs with time_zone = '+00:00'). Client-chosen ids (scope_id,
-- source_id, scan continuations) are VARBINARY: byte-exact and byte-ordered like PostgreSQL's "C" collation and
-- SQLite's BINARY (the *_bin collations are PAD SPACE on MariaDB/OceanBase: 'a' would equal 'a '). Server-made ids
-- and keys (uuids, sha256 hex, member ids) are ascii_bin / utf8mb4_bin. CHECKs bound ids in bytes.
-- JSON payloads are compact bytes in MEDIUMBLOB. No foreign keys: the application writes every value under the
-- ledger's lock order (docs/protocol.md#lock-order).

-- Work Ledger -----------------------------------------------------------------------------------------------------

CREATE TABLE pc_work_items (
    work_id                  CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    logical_key              CHAR(64)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    lane_key                 CHAR(64)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    lane_sequence            BIGINT       NOT NULL,
    kind                     VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    payload_version          INT          NOT NULL,
    scope_id                 VARBINARY(256) NOT NULL,
    payload                  MEDIUMBLOB   NOT NULL,
    status                   VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    available_at             DATETIME(6)  NOT NULL,
    lease_owner              VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    lease_fence              BIGINT       NOT NULL DEFAULT 0,
    lease_expires_at         DATETIME(6)  NULL,
    attempt_count            INT          NOT NULL DEFAULT 0,
    generation_attempt_count INT          NOT NULL DEFAULT 0,
    recovery_generation      INT          NOT NULL DEFAULT 0,
    max_attempts             INT          NOT NULL,
    cancel_requested         BOOLEAN      NOT NULL DEFAULT FALSE,
    result_code              VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL,
    result_payload           MEDIUMBLOB   NULL,
    error_category           VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL,
    error_code               VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NULL,
    state_version            BIGINT       NOT NULL,
    created_at               DATETIME(6)  NOT NULL,
    updated_at               DATETIME(6)  NOT NULL,
    completed_at             DATETIME(6)  NULL,
    PRIMARY KEY (work_id),
    UNIQUE KEY pc_work_items_lane_sequence_key (lane_key, lane_sequence),
    KEY pc_work_items_status_due_idx (status, available_at, created_at),
    KEY pc_work_items_lane_status_idx (lane_key, status),
    KEY pc_work_items_completed_idx (completed_at),
    KEY pc_work_items_scope_created_idx (scope_id, created_at),
    CONSTRAINT pc_work_items_lane_sequence_check CHECK (lane_sequence > 0),
    CONSTRAINT pc_work_items_payload_version_check CHECK (payload_version > 0),
    CONSTRAINT pc_work_items_scope_id_check CHECK (LENGTH(scope_id) BETWEEN 1 AND 256),
    CONSTRAINT pc_work_items_payload_check CHECK (LENGTH(payload) <= 16384),
    CONSTRAINT pc_work_items_result_payload_check CHECK (LENGTH(result_payload) <= 16384),
    CONSTRAINT pc_work_items_status_check CHECK (status IN ('queued', 'running', 'retry_wait', 'cancelling', 'succeeded', 'failed', 'cancelled')),
    CONSTRAINT pc_work_items_lease_fence_check CHECK (lease_fence >= 0),
    CONSTRAINT pc_work_items_attempt_count_check CHECK (attempt_count >= 0),
    CONSTRAINT pc_work_items_generation_attempt_count_check CHECK (generation_attempt_count >= 0),
    CONSTRAINT pc_work_items_recovery_generation_check CHECK (recovery_generation >= 0),
    CONSTRAINT pc_work_items_max_attempts_check CHECK (max_attempts > 0),
    CONSTRAINT pc_work_items_state_version_check CHECK (state_version > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_work_attempts (
    work_id             CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    attempt_no          INT          NOT NULL,
    recovery_generation INT          NOT NULL,
    owner_id            VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    fence               BIGINT       NOT NULL,
    started_at          DATETIME(6)  NOT NULL,
    heartbeat_at        DATETIME(6)  NULL,
    finished_at         DATETIME(6)  NULL,
    outcome             VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NULL,
    error_category      VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL,
    error_code          VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NULL,
    trace_id            VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NULL,
    span_id             VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NULL,
    PRIMARY KEY (work_id, attempt_no),
    CONSTRAINT pc_work_attempts_attempt_no_check CHECK (attempt_no > 0),
    CONSTRAINT pc_work_attempts_outcome_check CHECK (outcome IN ('succeeded', 'retry_wait', 'snoozed', 'failed', 'cancelled', 'lease_expired_retry', 'lease_expired_failed'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_work_lanes (
    lane_key      CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    next_sequence BIGINT   NOT NULL DEFAULT 1,
    head_sequence BIGINT   NULL,
    PRIMARY KEY (lane_key),
    CONSTRAINT pc_work_lanes_next_sequence_check CHECK (next_sequence > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_work_keys (
    logical_key CHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    work_id     CHAR(36)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    lane_key    CHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at  DATETIME(6) NOT NULL,
    PRIMARY KEY (logical_key),
    UNIQUE KEY pc_work_keys_work_id_key (work_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_scheduler_leases (
    lease_name       VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    owner_id         VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    fence            BIGINT       NOT NULL DEFAULT 0,
    lease_expires_at DATETIME(6)  NULL,
    updated_at       DATETIME(6)  NOT NULL,
    PRIMARY KEY (lease_name),
    CONSTRAINT pc_scheduler_leases_fence_check CHECK (fence >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_scheduler_scans (
    discoverer    VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    next_run_at   DATETIME(6)  NOT NULL,
    continuation  VARBINARY(256) NULL,
    state_version BIGINT       NOT NULL,
    updated_at    DATETIME(6)  NOT NULL,
    PRIMARY KEY (discoverer),
    CONSTRAINT pc_scheduler_scans_continuation_check CHECK (LENGTH(continuation) <= 256),
    CONSTRAINT pc_scheduler_scans_state_version_check CHECK (state_version > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_runtime_members (
    member_id         VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    role              VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    build_version     VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    schema_min        BIGINT       NOT NULL,
    schema_max        BIGINT       NOT NULL,
    payload_min       INT          NOT NULL,
    payload_max       INT          NOT NULL,
    behavior_revision VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    started_at        DATETIME(6)  NOT NULL,
    heartbeat_at      DATETIME(6)  NOT NULL,
    expires_at        DATETIME(6)  NOT NULL,
    PRIMARY KEY (member_id),
    KEY pc_runtime_members_role_expires_idx (role, expires_at),
    CONSTRAINT pc_runtime_members_role_check CHECK (role IN ('all', 'api', 'scheduler', 'worker'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_rate_limit_windows (
    principal_key     CHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    policy_id         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    window_started_at DATETIME(6) NOT NULL,
    request_count     INT         NOT NULL,
    expires_at        DATETIME(6) NOT NULL,
    PRIMARY KEY (principal_key, policy_id, window_started_at),
    KEY pc_rate_limit_windows_expires_idx (expires_at),
    CONSTRAINT pc_rate_limit_windows_request_count_check CHECK (request_count > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Dashboard sessions (docs/security.md#dashboard-sessions): the SHA-256 of the session id, never the id.
CREATE TABLE pc_ui_sessions (
    session_digest    CHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    principal_name    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    principal_binding VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at        DATETIME(6) NOT NULL,
    expires_at        DATETIME(6) NOT NULL,
    PRIMARY KEY (session_digest),
    KEY pc_ui_sessions_expires_idx (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Domain ----------------------------------------------------------------------------------------------------------

CREATE TABLE pc_sources (
    scope_id         VARBINARY(256) NOT NULL,
    journal_position BIGINT       NOT NULL,
    source_id        VARBINARY(256) NOT NULL,
    source_type      VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    content          MEDIUMTEXT   CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    metadata         MEDIUMBLOB   NOT NULL,
    created_at       DATETIME(6)  NOT NULL,
    erased_at        DATETIME(6)  NULL,
    PRIMARY KEY (scope_id, journal_position),
    UNIQUE KEY pc_sources_source_key (scope_id, source_id),
    KEY pc_sources_created_idx (created_at),
    CONSTRAINT pc_sources_journal_position_check CHECK (journal_position > 0),
    CONSTRAINT pc_sources_source_id_check CHECK (LENGTH(source_id) BETWEEN 1 AND 256),
    CONSTRAINT pc_sources_content_check CHECK (LENGTH(content) BETWEEN 0 AND 65536)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_source_journal_heads (
    scope_id   VARBINARY(256) NOT NULL,
    position   BIGINT       NOT NULL,
    updated_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (scope_id),
    CONSTRAINT pc_source_journal_heads_position_check CHECK (position >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_source_cursors (
    scope_id    VARBINARY(256) NOT NULL,
    cursor_name VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    position    BIGINT       NOT NULL,
    generation  BIGINT       NOT NULL,
    updated_at  DATETIME(6)  NOT NULL,
    PRIMARY KEY (scope_id, cursor_name),
    CONSTRAINT pc_source_cursors_position_check CHECK (position >= 0),
    CONSTRAINT pc_source_cursors_generation_check CHECK (generation >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Entry ids (docs/memory.md#entry-ids): entry_id is an entry's stable id within its scope, last_entry_id the highest
-- id the scope had given out when the revision was written, evicted_entry_ids the JSON array of the ids the
-- 500-entry cap dropped from it (docs/memory.md#eviction). All three are NULL in rows an older build wrote.
CREATE TABLE pc_memory_revisions (
    scope_id          VARBINARY(256) NOT NULL,
    revision          BIGINT       NOT NULL,
    work_id           CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    cursor_generation BIGINT       NOT NULL,
    window_after      BIGINT       NOT NULL,
    window_through    BIGINT       NOT NULL,
    entry_count       INT          NOT NULL,
    created_at        DATETIME(6)  NOT NULL,
    last_entry_id     BIGINT       NULL,
    evicted_entry_ids MEDIUMBLOB   NULL,
    PRIMARY KEY (scope_id, revision),
    CONSTRAINT pc_memory_revisions_revision_check CHECK (revision > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_memory_entries (
    scope_id         VARBINARY(256) NOT NULL,
    revision         BIGINT       NOT NULL,
    entry_no         INT          NOT NULL,
    content          MEDIUMTEXT   CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    source_positions MEDIUMBLOB   NOT NULL,
    created_at       DATETIME(6)  NOT NULL,
    entry_id         BIGINT       NULL,
    PRIMARY KEY (scope_id, revision, entry_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Entry embeddings (docs/memory.md#embeddings): one vector per entry of a revision in the embedding space `model`
-- (the configured embedder's), as little-endian float32 (4 bytes per dimension). Written in the final commit of the
-- revision (or by a memory_embed operation in the scope's memory lane); only the latest revision keeps its vectors.
-- Deleted with their entries by a redaction, a scope erase and revision retention.
CREATE TABLE pc_memory_embeddings (
    scope_id   VARBINARY(256) NOT NULL,
    revision   BIGINT       NOT NULL,
    entry_no   INT          NOT NULL,
    model      VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    dimensions INT          NOT NULL,
    embedding  BLOB         NOT NULL,
    created_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (scope_id, revision, entry_no),
    CONSTRAINT pc_memory_embeddings_dimensions_check CHECK (dimensions BETWEEN 1 AND 8192),
    CONSTRAINT pc_memory_embeddings_embedding_check CHECK (LENGTH(embedding) = 4 * dimensions)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE pc_experience_candidates (
    candidate_id    CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    scope_id        VARBINARY(256) NOT NULL,
    work_id         CHAR(36)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    title           VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    lesson          MEDIUMTEXT   CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    cited_positions MEDIUMBLOB   NOT NULL,
    status          VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    state_version   BIGINT       NOT NULL,
    created_at      DATETIME(6)  NOT NULL,
    updated_at      DATETIME(6)  NOT NULL,
    PRIMARY KEY (candidate_id),
    KEY pc_experience_candidates_scope_status_idx (scope_id, status, created_at),
    KEY pc_experience_candidates_scope_candidate_idx (scope_id, candidate_id),
    CONSTRAINT pc_experience_candidates_status_check CHECK (status IN ('pending', 'approved', 'rejected', 'withdrawn')),
    CONSTRAINT pc_experience_candidates_state_version_check CHECK (state_version > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Skills ----------------------------------------------------------------------------------------------------------

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
-- The candidates each revision was built from, one row per candidate (the relation form of source_candidate_ids,
-- written with the revision): the packaging discoverer probes (scope_id, candidate_id) instead of searching JSON.
CREATE TABLE pc_skill_revision_candidates (
    scope_id     VARBINARY(256) NOT NULL,
    skill_name   VARCHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    revision     BIGINT         NOT NULL,
    candidate_id CHAR(36)       CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    PRIMARY KEY (scope_id, skill_name, revision, candidate_id),
    KEY pc_skill_revision_candidates_scope_candidate_idx (scope_id, candidate_id)
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
