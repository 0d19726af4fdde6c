// Atlas configuration for DBAs. The migration directories below are the ones `powercontext server migrate` applies
// from the binary; both tools record into atlas_schema_revisions in the connected schema, so either continues the
// other's history. POWERCONTEXT_MIGRATE_DATABASE_URL is the migration (DDL) account, separate from the application
// account in POWERCONTEXT_DATABASE_URL.
//
//   POWERCONTEXT_MIGRATE_DATABASE_URL='mysql://migrator:PASS@db:3306/powercontext' atlas migrate apply --env mysql
//   POWERCONTEXT_MIGRATE_DATABASE_URL='postgres://migrator:PASS@db:5432/powercontext?sslmode=require&search_path=public' \
//     atlas migrate apply --env postgres
//   POWERCONTEXT_MIGRATE_DATABASE_URL='sqlite://data/powercontext.db' atlas migrate apply --env sqlite
//
// PostgreSQL: the URL must name the schema with search_path, as the service's does implicitly (current_schema()).
// Without it Atlas keeps its revisions in a separate schema named atlas_schema_revisions and would not see the
// service's history. OceanBase: use a mysql:// URL (the service also accepts oceanbase://, Atlas does not).
// Do not run `atlas migrate apply` while `powercontext server migrate` runs: Atlas serialises itself with a session
// lock, the service with the schema-migration lease row.
//
// Authoring a migration: change sql/schema/<engine>/schema.sql, then `atlas migrate diff --env <engine> <label>`
// (dev is a throw-away database Atlas uses to compute the diff), use the same version and label in all three
// directories, then `make migrate-hash`.

env "postgres" {
  url = getenv("POWERCONTEXT_MIGRATE_DATABASE_URL")
  dev = "docker://postgres/16/dev?search_path=public"
  src = "file://sql/schema/postgres/schema.sql"
  migration {
    dir = "file://sql/migrations/postgres"
  }
}

env "mysql" {
  url = getenv("POWERCONTEXT_MIGRATE_DATABASE_URL")
  dev = "docker://mysql/8/dev"
  src = "file://sql/schema/mysql/schema.sql"
  migration {
    dir = "file://sql/migrations/mysql"
  }
}

env "sqlite" {
  url = getenv("POWERCONTEXT_MIGRATE_DATABASE_URL")
  dev = "sqlite://dev?mode=memory"
  src = "file://sql/schema/sqlite/schema.sql"
  migration {
    dir = "file://sql/migrations/sqlite"
  }
}
