package app

import (
	"bytes"
	"context"
	"testing"
	"time"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/migrate"
)

// TestMigrateRefusesToLeaveLiveMembersBehind: `server migrate` applies a migration that is not expand-only only when
// no live member's advertised schema range ends below it (or with --force); expand-only migrations always go.
func TestMigrateRefusesToLeaveLiveMembersBehind(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		ctx := context.Background()
		embedded, err := migrate.Dir(engine)
		require.NoError(t, err)
		files, err := embedded.Files()
		require.NoError(t, err)
		// The database stops before the last migration that is not expand-only.
		stop := -1
		for i, f := range files {
			if !migrate.IsExpand(f.Name()) {
				stop = i
			}
		}
		require.Positive(t, stop, "a migration after the baseline that is not expand-only")
		older := &atlasmigrate.MemDir{}
		for _, f := range files[:stop] {
			require.NoError(t, older.WriteFile(f.Name(), f.Bytes()))
		}
		sum, err := older.Checksum()
		require.NoError(t, err)
		require.NoError(t, atlasmigrate.WriteSumFile(older, sum))

		raw := enginetest.NewDatabase(t, engine)
		u := enginetest.ParseURL(t, raw)
		sqlDB := enginetest.OpenSQLDB(t, u)
		store := enginetest.OpenStore(t, u)
		_, err = migrate.Apply(ctx, engine, sqlDB, store, "older", migrate.WithDir(older))
		require.NoError(t, err)

		member := coordinator.NewMembership(store, db.RuntimeMember{MemberID: "worker/old", Role: "worker", BuildVersion: "old",
			SchemaMin: migrate.VersionNumber(files[stop-1].Name()), SchemaMax: migrate.VersionNumber(files[stop-1].Name()),
			PayloadMin: 1, PayloadMax: 1, BehaviorRevision: BehaviorRevision}, time.Second, time.Minute, zerolog.Nop())
		require.NoError(t, member.Beat(ctx))

		var out bytes.Buffer
		err = runMigrate(ctx, &out, raw, false, false)
		require.ErrorContains(t, err, files[stop].Name())
		require.ErrorContains(t, err, "worker/old (old)")
		rep, err := migrate.Status(ctx, engine, sqlDB)
		require.NoError(t, err)
		require.Len(t, rep.Pending, len(files)-stop, "nothing was applied")

		require.NoError(t, runMigrate(ctx, &out, raw, true, false), "--force applies it anyway")
		require.Contains(t, out.String(), "applied "+files[stop].Name())
	})
}
