package sqlreview

import (
	"context"
	"testing"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/enginetest"
)

// seededDatabase creates a migrated database on engine (dropped when the test ends) and seeds it.
func seededDatabase(t *testing.T, engine db.Engine) dburl.URL {
	t.Helper()
	u := enginetest.MigratedDatabase(t, engine)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if err := Seed(ctx, enginetest.OpenSQLDB(t, u), engine); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %s (%d work items, %d sources) in %s", engine, Items, Scopes*SourcesPerScope, time.Since(start).Round(time.Millisecond))
	return u
}
