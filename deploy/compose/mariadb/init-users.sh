#!/bin/sh
# Runs once, when the MariaDB container initialises an empty data directory. Two accounts:
#   powercontext_migrator  DDL on the powercontext database: `powercontext server migrate` and `atlas migrate apply`;
#   powercontext_app       rows only: every api, scheduler and worker process.
set -eu
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/\\\\/\\\\\\\\/g; s/'/''/g")"; }
mariadb --user=root --password="$MARIADB_ROOT_PASSWORD" <<SQL
CREATE USER 'powercontext_migrator'@'%' IDENTIFIED BY $(quote "$MIGRATOR_DB_PASSWORD");
CREATE USER 'powercontext_app'@'%' IDENTIFIED BY $(quote "$APP_DB_PASSWORD");
GRANT ALL PRIVILEGES ON powercontext.* TO 'powercontext_migrator'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON powercontext.* TO 'powercontext_app'@'%';
SQL
