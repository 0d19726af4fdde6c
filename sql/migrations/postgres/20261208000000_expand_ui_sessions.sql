-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Dashboard sessions (docs/security.md#dashboard-sessions): one row per sign-in, keyed by the SHA-256 of the random
-- session id (never the id itself), tied to the token that opened it by principal_binding, expiring on database
-- time. Maintenance purges expired rows through the expires_at index.
CREATE TABLE pc_ui_sessions (
    session_digest    char(64)    COLLATE "C" NOT NULL,
    principal_name    varchar(64) COLLATE "C" NOT NULL,
    principal_binding varchar(64) COLLATE "C" NOT NULL,
    created_at        timestamptz NOT NULL,
    expires_at        timestamptz NOT NULL,
    CONSTRAINT pc_ui_sessions_pkey PRIMARY KEY (session_digest)
);
CREATE INDEX pc_ui_sessions_expires_idx ON pc_ui_sessions (expires_at);
