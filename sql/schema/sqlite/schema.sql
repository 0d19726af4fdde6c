-- powercontext desired schema, embedded SQLite (single_node only).
-- Time encoding: every time column is an INTEGER holding microseconds since the Unix epoch, UTC
-- ("unix micros"). It sorts and compares as a plain integer and keeps microsecond precision; the database clock
-- (CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000) has millisecond resolution, so fresh values end in 000.
-- Ids and keys are TEXT compared with SQLite's default BINARY collation (byte-exact). JSON payloads are BLOBs.
-- There is no FOR UPDATE: write transactions are BEGIN IMMEDIATE on the single writer connection, so the database
-- write lock serialises every ledger transaction. No foreign keys, as on every engine.


-- Work Ledger -----------------------------------------------------------------------------------------------------

CREATE TABLE pc_work_items (
    work_id                  TEXT         NOT NULL,
    logical_key              TEXT         NOT NULL,
    lane_key                 TEXT         NOT NULL,
    lane_sequence            INTEGER       NOT NULL,
    kind                     TEXT         NOT NULL,
    payload_version          INTEGER      NOT NULL,
    scope_id                 TEXT         NOT NULL,
    payload                  BLOB         NOT NULL,
    status                   TEXT         NOT NULL,
    available_at             INTEGER       NOT NULL,
    lease_owner              TEXT        ,
    lease_fence              INTEGER       NOT NULL DEFAULT 0,
    lease_expires_at         INTEGER     ,
    attempt_count            INTEGER      NOT NULL DEFAULT 0,
    generation_attempt_count INTEGER      NOT NULL DEFAULT 0,
    recovery_generation      INTEGER      NOT NULL DEFAULT 0,
    max_attempts             INTEGER      NOT NULL,
    cancel_requested         BOOLEAN      NOT NULL DEFAULT 0,
    result_code              TEXT        ,
    result_payload           BLOB ,
    error_category           TEXT        ,
    error_code               TEXT        ,
    state_version            INTEGER       NOT NULL,
    created_at               INTEGER       NOT NULL,
    updated_at               INTEGER       NOT NULL,
    completed_at             INTEGER     ,
    CONSTRAINT pc_work_items_pkey PRIMARY KEY (work_id),
    CONSTRAINT pc_work_items_lane_sequence_key UNIQUE (lane_key, lane_sequence),
    CONSTRAINT pc_work_items_lane_sequence_check CHECK (lane_sequence > 0),
    CONSTRAINT pc_work_items_payload_version_check CHECK (payload_version > 0),
    CONSTRAINT pc_work_items_scope_id_check CHECK (length(CAST(scope_id AS BLOB)) BETWEEN 1 AND 256),
    CONSTRAINT pc_work_items_payload_check CHECK (length(CAST(payload AS BLOB)) <= 16384),
    CONSTRAINT pc_work_items_result_payload_check CHECK (length(CAST(result_payload AS BLOB)) <= 16384),
    CONSTRAINT pc_work_items_status_check CHECK (status IN ('queued', 'running', 'retry_wait', 'cancelling', 'succeeded', 'failed', 'cancelled')),
    CONSTRAINT pc_work_items_lease_fence_check CHECK (lease_fence >= 0),
    CONSTRAINT pc_work_items_attempt_count_check CHECK (attempt_count >= 0),
    CONSTRAINT pc_work_items_generation_attempt_count_check CHECK (generation_attempt_count >= 0),
    CONSTRAINT pc_work_items_recovery_generation_check CHECK (recovery_generation >= 0),
    CONSTRAINT pc_work_items_max_attempts_check CHECK (max_attempts > 0),
    CONSTRAINT pc_work_items_state_version_check CHECK (state_version > 0)
);
CREATE INDEX pc_work_items_status_due_idx ON pc_work_items (status, available_at, created_at);
CREATE INDEX pc_work_items_lane_status_idx ON pc_work_items (lane_key, status);
CREATE INDEX pc_work_items_completed_idx ON pc_work_items (completed_at);
CREATE INDEX pc_work_items_scope_created_idx ON pc_work_items (scope_id, created_at);

CREATE TABLE pc_work_attempts (
    work_id             TEXT         NOT NULL,
    attempt_no          INTEGER      NOT NULL,
    recovery_generation INTEGER      NOT NULL,
    owner_id            TEXT         NOT NULL,
    fence               INTEGER       NOT NULL,
    started_at          INTEGER       NOT NULL,
    heartbeat_at        INTEGER     ,
    finished_at         INTEGER     ,
    outcome             TEXT        ,
    error_category      TEXT        ,
    error_code          TEXT        ,
    trace_id            TEXT        ,
    span_id             TEXT        ,
    CONSTRAINT pc_work_attempts_pkey PRIMARY KEY (work_id, attempt_no),
    CONSTRAINT pc_work_attempts_attempt_no_check CHECK (attempt_no > 0),
    CONSTRAINT pc_work_attempts_outcome_check CHECK (outcome IN ('succeeded', 'retry_wait', 'snoozed', 'failed', 'cancelled', 'lease_expired_retry', 'lease_expired_failed'))
);

CREATE TABLE pc_work_lanes (
    lane_key      TEXT        NOT NULL,
    next_sequence INTEGER      NOT NULL DEFAULT 1,
    head_sequence INTEGER,
    CONSTRAINT pc_work_lanes_pkey PRIMARY KEY (lane_key),
    CONSTRAINT pc_work_lanes_next_sequence_check CHECK (next_sequence > 0)
);

CREATE TABLE pc_work_keys (
    logical_key TEXT        NOT NULL,
    work_id     TEXT        NOT NULL,
    lane_key    TEXT        NOT NULL,
    created_at  INTEGER      NOT NULL,
    CONSTRAINT pc_work_keys_pkey PRIMARY KEY (logical_key),
    CONSTRAINT pc_work_keys_work_id_key UNIQUE (work_id)
);

CREATE TABLE pc_scheduler_leases (
    lease_name       TEXT         NOT NULL,
    owner_id         TEXT        ,
    fence            INTEGER       NOT NULL DEFAULT 0,
    lease_expires_at INTEGER     ,
    updated_at       INTEGER       NOT NULL,
    CONSTRAINT pc_scheduler_leases_pkey PRIMARY KEY (lease_name),
    CONSTRAINT pc_scheduler_leases_fence_check CHECK (fence >= 0)
);

CREATE TABLE pc_scheduler_scans (
    discoverer    TEXT        NOT NULL,
    next_run_at   INTEGER      NOT NULL,
    continuation  TEXT       ,
    state_version INTEGER      NOT NULL,
    updated_at    INTEGER      NOT NULL,
    CONSTRAINT pc_scheduler_scans_pkey PRIMARY KEY (discoverer),
    CONSTRAINT pc_scheduler_scans_continuation_check CHECK (length(CAST(continuation AS BLOB)) <= 256),
    CONSTRAINT pc_scheduler_scans_state_version_check CHECK (state_version > 0)
);

CREATE TABLE pc_runtime_members (
    member_id         TEXT         NOT NULL,
    role              TEXT         NOT NULL,
    build_version     TEXT         NOT NULL,
    schema_min        INTEGER       NOT NULL,
    schema_max        INTEGER       NOT NULL,
    payload_min       INTEGER      NOT NULL,
    payload_max       INTEGER      NOT NULL,
    behavior_revision TEXT         NOT NULL,
    started_at        INTEGER       NOT NULL,
    heartbeat_at      INTEGER       NOT NULL,
    expires_at        INTEGER       NOT NULL,
    CONSTRAINT pc_runtime_members_pkey PRIMARY KEY (member_id),
    CONSTRAINT pc_runtime_members_role_check CHECK (role IN ('all', 'api', 'scheduler', 'worker'))
);
CREATE INDEX pc_runtime_members_role_expires_idx ON pc_runtime_members (role, expires_at);

CREATE TABLE pc_rate_limit_windows (
    principal_key     TEXT        NOT NULL,
    policy_id         TEXT        NOT NULL,
    window_started_at INTEGER      NOT NULL,
    request_count     INTEGER     NOT NULL,
    expires_at        INTEGER      NOT NULL,
    CONSTRAINT pc_rate_limit_windows_pkey PRIMARY KEY (principal_key, policy_id, window_started_at),
    CONSTRAINT pc_rate_limit_windows_request_count_check CHECK (request_count > 0)
);
CREATE INDEX pc_rate_limit_windows_expires_idx ON pc_rate_limit_windows (expires_at);

-- Dashboard sessions (docs/security.md#dashboard-sessions): the SHA-256 of the session id, never the id.
CREATE TABLE pc_ui_sessions (
    session_digest    TEXT        NOT NULL,
    principal_name    TEXT        NOT NULL,
    principal_binding TEXT        NOT NULL,
    created_at        INTEGER     NOT NULL,
    expires_at        INTEGER     NOT NULL,
    CONSTRAINT pc_ui_sessions_pkey PRIMARY KEY (session_digest)
);
CREATE INDEX pc_ui_sessions_expires_idx ON pc_ui_sessions (expires_at);

-- Domain ----------------------------------------------------------------------------------------------------------

CREATE TABLE pc_sources (
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
CREATE INDEX pc_sources_created_idx ON pc_sources (created_at);

CREATE TABLE pc_source_journal_heads (
    scope_id   TEXT        NOT NULL,
    position   INTEGER      NOT NULL,
    updated_at INTEGER      NOT NULL,
    CONSTRAINT pc_source_journal_heads_pkey PRIMARY KEY (scope_id),
    CONSTRAINT pc_source_journal_heads_position_check CHECK (position >= 0)
);

CREATE TABLE pc_source_cursors (
    scope_id    TEXT        NOT NULL,
    cursor_name TEXT        NOT NULL,
    position    INTEGER      NOT NULL,
    generation  INTEGER      NOT NULL,
    updated_at  INTEGER      NOT NULL,
    CONSTRAINT pc_source_cursors_pkey PRIMARY KEY (scope_id, cursor_name),
    CONSTRAINT pc_source_cursors_position_check CHECK (position >= 0),
    CONSTRAINT pc_source_cursors_generation_check CHECK (generation >= 0)
);

-- Entry ids (docs/memory.md#entry-ids): entry_id is an entry's stable id within its scope, last_entry_id the highest
-- id the scope had given out when the revision was written, evicted_entry_ids the JSON array of the ids the
-- 500-entry cap dropped from it (docs/memory.md#eviction). All three are NULL in rows an older build wrote.
CREATE TABLE pc_memory_revisions (
    scope_id          TEXT        NOT NULL,
    revision          INTEGER      NOT NULL,
    work_id           TEXT        NOT NULL,
    cursor_generation INTEGER      NOT NULL,
    window_after      INTEGER      NOT NULL,
    window_through    INTEGER      NOT NULL,
    entry_count       INTEGER     NOT NULL,
    created_at        INTEGER      NOT NULL,
    last_entry_id     INTEGER     ,
    evicted_entry_ids BLOB        ,
    CONSTRAINT pc_memory_revisions_pkey PRIMARY KEY (scope_id, revision),
    CONSTRAINT pc_memory_revisions_revision_check CHECK (revision > 0)
);

CREATE TABLE pc_memory_entries (
    scope_id         TEXT        NOT NULL,
    revision         INTEGER      NOT NULL,
    entry_no         INTEGER     NOT NULL,
    content          TEXT        NOT NULL,
    source_positions BLOB        NOT NULL,
    created_at       INTEGER      NOT NULL,
    entry_id         INTEGER     ,
    CONSTRAINT pc_memory_entries_pkey PRIMARY KEY (scope_id, revision, entry_no)
);

-- Entry embeddings (docs/memory.md#embeddings): one vector per entry of a revision in the embedding space `model`
-- (the configured embedder's), as little-endian float32 (4 bytes per dimension). Written in the final commit of the
-- revision (or by a memory_embed operation in the scope's memory lane); only the latest revision keeps its vectors.
-- Deleted with their entries by a redaction, a scope erase and revision retention.
CREATE TABLE pc_memory_embeddings (
    scope_id   TEXT         NOT NULL,
    revision   INTEGER      NOT NULL,
    entry_no   INTEGER      NOT NULL,
    model      TEXT         NOT NULL,
    dimensions INTEGER      NOT NULL,
    embedding  BLOB         NOT NULL,
    created_at INTEGER      NOT NULL,
    CONSTRAINT pc_memory_embeddings_pkey PRIMARY KEY (scope_id, revision, entry_no),
    CONSTRAINT pc_memory_embeddings_dimensions_check CHECK (dimensions BETWEEN 1 AND 8192),
    CONSTRAINT pc_memory_embeddings_embedding_check CHECK (length(embedding) = 4 * dimensions)
);

CREATE TABLE pc_experience_candidates (
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
CREATE INDEX pc_experience_candidates_scope_status_idx ON pc_experience_candidates (scope_id, status, created_at);
CREATE INDEX pc_experience_candidates_scope_candidate_idx ON pc_experience_candidates (scope_id, candidate_id);

-- Skills ----------------------------------------------------------------------------------------------------------

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
-- The candidates each revision was built from, one row per candidate (the relation form of source_candidate_ids,
-- written with the revision): the packaging discoverer probes (scope_id, candidate_id) instead of searching JSON.
CREATE TABLE pc_skill_revision_candidates (
    scope_id     TEXT    NOT NULL,
    skill_name   TEXT    NOT NULL,
    revision     INTEGER NOT NULL,
    candidate_id TEXT    NOT NULL,
    CONSTRAINT pc_skill_revision_candidates_pkey PRIMARY KEY (scope_id, skill_name, revision, candidate_id)
);
CREATE INDEX pc_skill_revision_candidates_scope_candidate_idx ON pc_skill_revision_candidates (scope_id, candidate_id);
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
