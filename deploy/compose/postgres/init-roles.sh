#!/bin/sh
# Runs once, when the PostgreSQL container initialises an empty data directory. Two accounts:
#   powercontext_migrator  owns the schema objects: `powercontext server migrate` and `atlas migrate apply` use it;
#   powercontext_app       reads and writes rows only: every api, scheduler and worker process uses it.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v migrator_pw="$MIGRATOR_DB_PASSWORD" -v app_pw="$APP_DB_PASSWORD" <<'SQL'
CREATE ROLE powercontext_migrator LOGIN PASSWORD :'migrator_pw';
CREATE ROLE powercontext_app LOGIN PASSWORD :'app_pw';
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO powercontext_migrator;
GRANT USAGE ON SCHEMA public TO powercontext_app;
-- Every table and sequence the migrator creates is readable and writable by the application account.
ALTER DEFAULT PRIVILEGES FOR ROLE powercontext_migrator IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO powercontext_app;
ALTER DEFAULT PRIVILEGES FOR ROLE powercontext_migrator IN SCHEMA public
  GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO powercontext_app;
SQL
