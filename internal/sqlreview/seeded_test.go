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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := Seed(ctx, enginetest.OpenSQLDB(t, u), engine); err != nil {
		t.Fatal(err)
	}
	return u
}
