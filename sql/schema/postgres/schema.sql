-- powercontext desired schema, PostgreSQL >= 13.
-- Times are timestamptz (microsecond precision, always written in UTC). Ids and keys use the "C" collation so
-- comparison and ordering are byte-exact. JSON payloads are stored as compact bytes (bytea).
-- No foreign keys: the application writes every value under the ledger's lock order (docs/protocol.md#lock-order).

-- Work Ledger -----------------------------------------------------------------------------------------------------

CREATE TABLE pc_work_items (
    work_id                  uuid         NOT NULL,
    logical_key              varchar(64)  COLLATE "C" NOT NULL,
    lane_key                 varchar(64)  COLLATE "C" NOT NULL,
    lane_sequence            bigint       NOT NULL,
    kind                     varchar(128) COLLATE "C" NOT NULL,
    payload_version          integer      NOT NULL,
    scope_id                 text         COLLATE "C" NOT NULL,
    payload                  bytea        NOT NULL,
    status                   varchar(16)  COLLATE "C" NOT NULL,
    available_at             timestamptz  NOT NULL,
    lease_owner              varchar(128) COLLATE "C",
    lease_fence              bigint       NOT NULL DEFAULT 0,
    lease_expires_at         timestamptz,
    attempt_count            integer      NOT NULL DEFAULT 0,
    generation_attempt_count integer      NOT NULL DEFAULT 0,
    recovery_generation      integer      NOT NULL DEFAULT 0,
    max_attempts             integer      NOT NULL,
    cancel_requested         boolean      NOT NULL DEFAULT false,
    result_code              varchar(64)  COLLATE "C",
    result_payload           bytea,
    error_category           varchar(64)  COLLATE "C",
    error_code               varchar(128) COLLATE "C",
    state_version            bigint       NOT NULL,
    created_at               timestamptz  NOT NULL,
    updated_at               timestamptz  NOT NULL,
    completed_at             timestamptz,
    CONSTRAINT pc_work_items_pkey PRIMARY KEY (work_id),
    CONSTRAINT pc_work_items_lane_sequence_key UNIQUE (lane_key, lane_sequence),
    CONSTRAINT pc_work_items_lane_sequence_check CHECK (lane_sequence > 0),
    CONSTRAINT pc_work_items_payload_version_check CHECK (payload_version > 0),
    CONSTRAINT pc_work_items_scope_id_check CHECK (octet_length(scope_id) BETWEEN 1 AND 256),
    CONSTRAINT pc_work_items_payload_check CHECK (octet_length(payload) <= 16384),
    CONSTRAINT pc_work_items_result_payload_check CHECK (octet_length(result_payload) <= 16384),
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
    work_id             uuid         NOT NULL,
    attempt_no          integer      NOT NULL,
    recovery_generation integer      NOT NULL,
    owner_id            varchar(128) COLLATE "C" NOT NULL,
    fence               bigint       NOT NULL,
    started_at          timestamptz  NOT NULL,
    heartbeat_at        timestamptz,
    finished_at         timestamptz,
    outcome             varchar(32)  COLLATE "C",
    error_category      varchar(64)  COLLATE "C",
    error_code          varchar(128) COLLATE "C",
    trace_id            varchar(32)  COLLATE "C",
    span_id             varchar(16)  COLLATE "C",
    CONSTRAINT pc_work_attempts_pkey PRIMARY KEY (work_id, attempt_no),
    CONSTRAINT pc_work_attempts_attempt_no_check CHECK (attempt_no > 0),
    CONSTRAINT pc_work_attempts_outcome_check CHECK (outcome IN ('succeeded', 'retry_wait', 'snoozed', 'failed', 'cancelled', 'lease_expired_retry', 'lease_expired_failed'))
);

CREATE TABLE pc_work_lanes (
    lane_key      varchar(64) COLLATE "C" NOT NULL,
    next_sequence bigint      NOT NULL DEFAULT 1,
    head_sequence bigint,
    CONSTRAINT pc_work_lanes_pkey PRIMARY KEY (lane_key),
    CONSTRAINT pc_work_lanes_next_sequence_check CHECK (next_sequence > 0)
);

CREATE TABLE pc_work_keys (
    logical_key varchar(64) COLLATE "C" NOT NULL,
    work_id     uuid        NOT NULL,
    lane_key    varchar(64) COLLATE "C" NOT NULL,
    created_at  timestamptz NOT NULL,
    CONSTRAINT pc_work_keys_pkey PRIMARY KEY (logical_key),
    CONSTRAINT pc_work_keys_work_id_key UNIQUE (work_id)
);

CREATE TABLE pc_scheduler_leases (
    lease_name       varchar(64)  COLLATE "C" NOT NULL,
    owner_id         varchar(128) COLLATE "C",
    fence            bigint       NOT NULL DEFAULT 0,
    lease_expires_at timestamptz,
    updated_at       timestamptz  NOT NULL,
    CONSTRAINT pc_scheduler_leases_pkey PRIMARY KEY (lease_name),
    CONSTRAINT pc_scheduler_leases_fence_check CHECK (fence >= 0)
);

CREATE TABLE pc_scheduler_scans (
    discoverer    varchar(64) COLLATE "C" NOT NULL,
    next_run_at   timestamptz NOT NULL,
    continuation  text        COLLATE "C",
    state_version bigint      NOT NULL,
    updated_at    timestamptz NOT NULL,
    CONSTRAINT pc_scheduler_scans_pkey PRIMARY KEY (discoverer),
    CONSTRAINT pc_scheduler_scans_continuation_check CHECK (octet_length(continuation) <= 256),
    CONSTRAINT pc_scheduler_scans_state_version_check CHECK (state_version > 0)
);

CREATE TABLE pc_runtime_members (
    member_id         varchar(128) COLLATE "C" NOT NULL,
    role              varchar(16)  COLLATE "C" NOT NULL,
    build_version     varchar(64)  COLLATE "C" NOT NULL,
    schema_min        bigint       NOT NULL,
    schema_max        bigint       NOT NULL,
    payload_min       integer      NOT NULL,
    payload_max       integer      NOT NULL,
    behavior_revision varchar(64)  COLLATE "C" NOT NULL,
    started_at        timestamptz  NOT NULL,
    heartbeat_at      timestamptz  NOT NULL,
    expires_at        timestamptz  NOT NULL,
    CONSTRAINT pc_runtime_members_pkey PRIMARY KEY (member_id),
    CONSTRAINT pc_runtime_members_role_check CHECK (role IN ('all', 'api', 'scheduler', 'worker'))
);
CREATE INDEX pc_runtime_members_role_expires_idx ON pc_runtime_members (role, expires_at);

CREATE TABLE pc_rate_limit_windows (
    principal_key     varchar(64) COLLATE "C" NOT NULL,
    policy_id         varchar(64) COLLATE "C" NOT NULL,
    window_started_at timestamptz NOT NULL,
    request_count     integer     NOT NULL,
    expires_at        timestamptz NOT NULL,
    CONSTRAINT pc_rate_limit_windows_pkey PRIMARY KEY (principal_key, policy_id, window_started_at),
    CONSTRAINT pc_rate_limit_windows_request_count_check CHECK (request_count > 0)
);
CREATE INDEX pc_rate_limit_windows_expires_idx ON pc_rate_limit_windows (expires_at);

-- Dashboard sessions (docs/security.md#dashboard-sessions): the SHA-256 of the session id, never the id.
CREATE TABLE pc_ui_sessions (
    session_digest    char(64)    COLLATE "C" NOT NULL,
    principal_name    varchar(64) COLLATE "C" NOT NULL,
    principal_binding varchar(64) COLLATE "C" NOT NULL,
    created_at        timestamptz NOT NULL,
    expires_at        timestamptz NOT NULL,
    CONSTRAINT pc_ui_sessions_pkey PRIMARY KEY (session_digest)
);
CREATE INDEX pc_ui_sessions_expires_idx ON pc_ui_sessions (expires_at);

-- Domain ----------------------------------------------------------------------------------------------------------

CREATE TABLE pc_sources (
    scope_id         text        COLLATE "C" NOT NULL,
    journal_position bigint      NOT NULL,
    source_id        text        COLLATE "C" NOT NULL,
    source_type      varchar(64) COLLATE "C" NOT NULL,
    content          text        NOT NULL,
    metadata         bytea       NOT NULL,
    created_at       timestamptz NOT NULL,
    erased_at        timestamptz NULL,
    CONSTRAINT pc_sources_pkey PRIMARY KEY (scope_id, journal_position),
    CONSTRAINT pc_sources_source_key UNIQUE (scope_id, source_id),
    CONSTRAINT pc_sources_journal_position_check CHECK (journal_position > 0),
    CONSTRAINT pc_sources_source_id_check CHECK (octet_length(source_id) BETWEEN 1 AND 256),
    CONSTRAINT pc_sources_content_check CHECK (octet_length(content) BETWEEN 0 AND 65536)
);
CREATE INDEX pc_sources_created_idx ON pc_sources (created_at);

CREATE TABLE pc_source_journal_heads (
    scope_id   text        COLLATE "C" NOT NULL,
    position   bigint      NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT pc_source_journal_heads_pkey PRIMARY KEY (scope_id),
    CONSTRAINT pc_source_journal_heads_position_check CHECK (position >= 0)
);

CREATE TABLE pc_source_cursors (
    scope_id    text        COLLATE "C" NOT NULL,
    cursor_name varchar(64) COLLATE "C" NOT NULL,
    position    bigint      NOT NULL,
    generation  bigint      NOT NULL,
    updated_at  timestamptz NOT NULL,
    CONSTRAINT pc_source_cursors_pkey PRIMARY KEY (scope_id, cursor_name),
    CONSTRAINT pc_source_cursors_position_check CHECK (position >= 0),
    CONSTRAINT pc_source_cursors_generation_check CHECK (generation >= 0)
);

-- Entry ids (docs/memory.md#entry-ids): entry_id is an entry's stable id within its scope, last_entry_id the highest
-- id the scope had given out when the revision was written, evicted_entry_ids the JSON array of the ids the
-- 500-entry cap dropped from it (docs/memory.md#eviction). All three are NULL in rows an older build wrote.
CREATE TABLE pc_memory_revisions (
    scope_id          text        COLLATE "C" NOT NULL,
    revision          bigint      NOT NULL,
    work_id           uuid        NOT NULL,
    cursor_generation bigint      NOT NULL,
    window_after      bigint      NOT NULL,
    window_through    bigint      NOT NULL,
    entry_count       integer     NOT NULL,
    created_at        timestamptz NOT NULL,
    last_entry_id     bigint      NULL,
    evicted_entry_ids bytea       NULL,
    CONSTRAINT pc_memory_revisions_pkey PRIMARY KEY (scope_id, revision),
    CONSTRAINT pc_memory_revisions_revision_check CHECK (revision > 0)
);

CREATE TABLE pc_memory_entries (
    scope_id         text        COLLATE "C" NOT NULL,
    revision         bigint      NOT NULL,
    entry_no         integer     NOT NULL,
    content          text        NOT NULL,
    source_positions bytea       NOT NULL,
    created_at       timestamptz NOT NULL,
    entry_id         bigint      NULL,
    CONSTRAINT pc_memory_entries_pkey PRIMARY KEY (scope_id, revision, entry_no)
);

-- Entry embeddings (docs/memory.md#embeddings): one vector per entry of a revision in the embedding space `model`
-- (the configured embedder's), as little-endian float32 (4 bytes per dimension). Written in the final commit of the
-- revision (or by a memory_embed operation in the scope's memory lane); only the latest revision keeps its vectors.
-- Deleted with their entries by a redaction, a scope erase and revision retention.
CREATE TABLE pc_memory_embeddings (
    scope_id   text         COLLATE "C" NOT NULL,
    revision   bigint       NOT NULL,
    entry_no   integer      NOT NULL,
    model      varchar(128) COLLATE "C" NOT NULL,
    dimensions integer      NOT NULL,
    embedding  bytea        NOT NULL,
    created_at timestamptz  NOT NULL,
    CONSTRAINT pc_memory_embeddings_pkey PRIMARY KEY (scope_id, revision, entry_no),
    CONSTRAINT pc_memory_embeddings_dimensions_check CHECK (dimensions BETWEEN 1 AND 8192),
    CONSTRAINT pc_memory_embeddings_embedding_check CHECK (octet_length(embedding) = 4 * dimensions)
);

CREATE TABLE pc_experience_candidates (
    candidate_id    uuid         NOT NULL,
    scope_id        text         COLLATE "C" NOT NULL,
    work_id         uuid         NOT NULL,
    title           varchar(512) NOT NULL,
    lesson          text         NOT NULL,
    cited_positions bytea        NOT NULL,
    status          varchar(16)  COLLATE "C" NOT NULL,
    state_version   bigint       NOT NULL,
    created_at      timestamptz  NOT NULL,
    updated_at      timestamptz  NOT NULL,
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
-- The candidates each revision was built from, one row per candidate (the relation form of source_candidate_ids,
-- written with the revision): the packaging discoverer probes (scope_id, candidate_id) instead of searching JSON.
CREATE TABLE pc_skill_revision_candidates (
    scope_id     text        COLLATE "C" NOT NULL,
    skill_name   varchar(64) COLLATE "C" NOT NULL,
    revision     bigint      NOT NULL,
    candidate_id uuid        NOT NULL,
    CONSTRAINT pc_skill_revision_candidates_pkey PRIMARY KEY (scope_id, skill_name, revision, candidate_id)
);
CREATE INDEX pc_skill_revision_candidates_scope_candidate_idx ON pc_skill_revision_candidates (scope_id, candidate_id);
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
