-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Dashboard sessions (docs/security.md#dashboard-sessions): one row per sign-in, keyed by the SHA-256 of the random
-- session id (never the id itself), tied to the token that opened it by principal_binding, expiring on database
-- time. Maintenance purges expired rows through the expires_at index.
CREATE TABLE pc_ui_sessions (
    session_digest    CHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    principal_name    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    principal_binding VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at        DATETIME(6) NOT NULL,
    expires_at        DATETIME(6) NOT NULL,
    PRIMARY KEY (session_digest),
    KEY pc_ui_sessions_expires_idx (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
