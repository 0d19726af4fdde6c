// Package storetest is the conformance suite of the db.Store adapters: Run checks one engine, through
// db/enginetest, against the same engine-neutral assertions on PostgreSQL, MySQL/OceanBase and SQLite. It talks to
// db.Store (and, for the migration foundation, to package migrate), never to SQL of its own.
//
// Cases are named "<Method>/<Case>" after the method whose contract they check, and live in one file per table
// family, like sql/queries/<engine>/ (work_item.go holds the cases of work_item.sql, …; foundation.go holds the
// migrations and the schema). Each store case gets a fresh, isolated, migrated database and runs in parallel with
// the others, so cases never see each other's rows. Times are derived from the database clock (DBNow) wherever a
// query compares against it, and written values carry microseconds so the round trip is checked at that precision.
package storetest

import (
	"testing"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// storeCase checks one method's contract on a fresh migrated store.
type storeCase struct {
	name string
	fn   func(t *testing.T, s db.Store)
}

// foundationCase checks the migrations of one engine on databases it creates itself.
type foundationCase struct {
	name string
	fn   func(t *testing.T, engine db.Engine)
}

// Run runs every case on engine (one subtest each). Call it once per engine, through enginetest.Run.
func Run(t *testing.T, engine db.Engine) {
	t.Helper()
	for _, c := range foundationCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, engine)
		})
	}
	for _, family := range [][]storeCase{
		dbCases, workLaneCases, workKeyCases, workItemCases, workAttemptCases, compositeCases, schedulerLeaseCases,
		schedulerScanCases, runtimeMemberCases, rateLimitCases, uiSessionCases, sourceCases, sourceCursorCases, memoryCases,
		memoryEntryCases, memoryEmbeddingCases, experienceCases, skillCases, lifecycleCases, setCases,
	} {
		for _, c := range family {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.fn(t, enginetest.Open(t, engine))
			})
		}
	}
}

// RunComposite runs the composite-step cases (and the set-based ones) on stores from open: an adapter with more
// than one way to run its composite steps (MariaDB's folded statements and MySQL 8's) checks each way with it.
func RunComposite(t *testing.T, open func(t *testing.T) db.Store) {
	t.Helper()
	for _, family := range [][]storeCase{compositeCases, setCases} {
		for _, c := range family {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.fn(t, open(t))
			})
		}
	}
}
