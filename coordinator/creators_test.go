package coordinator_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/sources"
)

// TestCreatorRaces is the InnoDB trap the protocol is shaped around (docs/protocol.md#creating-rows): many callers
// on two connection pools creating the same new row at the same instant — a lane, a journal head, a rate-limit
// window, a scheduler lease, a discoverer's scan row — round after round, on every engine. Every caller must
// proceed without an error (a deadlock included), and exactly one row must exist afterwards, with every caller's
// effect in it.
func TestCreatorRaces(t *testing.T) {
	const callers = 8 // 4 per pool
	rounds := 15
	if testing.Short() {
		rounds = 4
	}
	for _, engine := range enginetest.Engines(t) {
		t.Run(string(engine), func(t *testing.T) {
			url := enginetest.MigratedDatabase(t, engine)
			stores := []db.Store{enginetest.OpenStore(t, url), enginetest.OpenStore(t, url)}
			ledgers := []*coordinator.Ledger{coordinator.NewLedger(stores[0]), coordinator.NewLedger(stores[1])}
			journals := []*sources.Journal{sources.NewJournal(stores[0]), sources.NewJournal(stores[1])}
			limiters := []*coordinator.RateLimiter{coordinator.NewRateLimiter(stores[0]), coordinator.NewRateLimiter(stores[1])}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()

			// race runs fn once per caller, all released at the same instant, and returns their errors.
			race := func(fn func(i int) error) []error {
				start := make(chan struct{})
				errs := make([]error, callers)
				var wg sync.WaitGroup
				for i := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						errs[i] = fn(i)
					}()
				}
				close(start)
				wg.Wait()
				return errs
			}
			// raceEnqueue races one enqueue per caller into laneKey, each with its own logical key under keyPrefix.
			raceEnqueue := func(laneKey, keyPrefix string) []error {
				return race(func(i int) error {
					_, err := ledgers[i%2].Enqueue(ctx, coordinator.EnqueueRequest{LaneKey: laneKey,
						Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
							return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: "creators/" + keyPrefix,
								LogicalKey: hash(fmt.Sprintf("%s/%d", keyPrefix, i)), Payload: map[string]any{"i": i}, MaxAttempts: 1}, nil
						}})
					return err
				})
			}
			requireNoErrors := func(what string, round int, errs []error) {
				t.Helper()
				for i, err := range errs {
					require.NoError(t, err, "%s, round %d, caller %d", what, round, i)
				}
			}

			for round := range rounds {
				tag := fmt.Sprintf("r%02d-%d", round, time.Now().UnixNano())

				// A new lane: every enqueue (its own logical key) lands, each with its own lane sequence.
				laneKey := hash("lane/" + tag)
				errs := raceEnqueue(laneKey, tag)
				requireNoErrors("enqueue into a new lane", round, errs)
				lane, err := stores[0].WorkLaneGet(ctx, laneKey)
				require.NoError(t, err)
				require.EqualValues(t, callers+1, lane.NextSequence, "one lane row, every enqueue took a sequence")

				// A new journal head: every capture lands at its own position, dense from 1.
				scope := "creators/" + tag
				errs = race(func(i int) error {
					_, err := journals[i%2].Capture(ctx, sources.CaptureRequest{ScopeID: scope, SourceID: fmt.Sprint("s", i),
						Content: fmt.Sprintf("Fact %d.", i)})
					return err
				})
				requireNoErrors("capture into a new scope", round, errs)
				list, err := stores[1].SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, Limit: 100})
				require.NoError(t, err)
				require.Len(t, list, callers)
				for i, src := range list {
					require.EqualValues(t, i+1, src.JournalPosition, "dense positions")
				}
				head, err := sources.Head(ctx, stores[0], scope)
				require.NoError(t, err)
				require.EqualValues(t, callers, head)

				// The same two rows just deleted (what a scope erase leaves): InnoDB keeps a delete-marked record that
				// the re-creating inserts race over; they must still all proceed.
				n, err := stores[0].SourceDeleteBatch(ctx, db.ScopeBatchParams{ScopeID: scope, Limit: 100})
				require.NoError(t, err)
				require.EqualValues(t, callers, n)
				_, err = stores[0].SourceJournalHeadDelete(ctx, scope)
				require.NoError(t, err)
				errs = race(func(i int) error {
					_, err := journals[i%2].Capture(ctx, sources.CaptureRequest{ScopeID: scope, SourceID: fmt.Sprint("again", i),
						Content: fmt.Sprintf("Fact %d again.", i)})
					return err
				})
				requireNoErrors("capture into a just-deleted head", round, errs)
				head, err = sources.Head(ctx, stores[0], scope)
				require.NoError(t, err)
				require.EqualValues(t, callers, head, "a fresh journal, dense from 1")
				deletedLane := hash("deleted-lane/" + tag)
				_, err = stores[0].WorkLaneInsertIfAbsent(ctx, deletedLane)
				require.NoError(t, err)
				_, err = stores[0].WorkLaneDeleteIdle(ctx, deletedLane)
				require.NoError(t, err)
				errs = raceEnqueue(deletedLane, tag+"/again")
				requireNoErrors("enqueue into a just-deleted lane", round, errs)
				lane, err = stores[0].WorkLaneGet(ctx, deletedLane)
				require.NoError(t, err)
				require.EqualValues(t, callers+1, lane.NextSequence)

				// A new rate-limit window: every request is counted once, in one window.
				principal := "creators-" + tag
				var decisions [callers]coordinator.RateDecision
				errs = race(func(i int) error {
					d, err := limiters[i%2].Allow(ctx, principal, "creators", 1000, time.Minute)
					decisions[i] = d
					return err
				})
				requireNoErrors("rate-limit a new window", round, errs)
				seen := map[int]bool{}
				for _, d := range decisions {
					require.True(t, d.Allowed)
					seen[d.Remaining] = true
				}
				require.Len(t, seen, callers, "each request saw its own count: one window, counted %d times", callers)

				// A new scheduler lease: exactly one caller takes it, the others see it held.
				leaseName := "creators-" + tag
				var acquired [callers]bool
				errs = race(func(i int) error {
					res, err := ledgers[i%2].AcquireLease(ctx, leaseName, fmt.Sprint("owner-", i), time.Minute)
					acquired[i] = res.Acquired
					return err
				})
				requireNoErrors("acquire a new lease", round, errs)
				require.Equal(t, 1, countTrue(acquired[:]), "exactly one holder of a new lease")

				// A new scan row: exactly one insert reports it created the row.
				now, err := stores[0].DBNow(ctx)
				require.NoError(t, err)
				var inserted [callers]bool
				errs = race(func(i int) error {
					ok, err := stores[i%2].SchedulerScanInsertIfAbsent(ctx, db.SchedulerScan{Discoverer: "creators-" + tag[:12],
						NextRunAt: now, StateVersion: 1, UpdatedAt: now})
					inserted[i] = ok
					return err
				})
				requireNoErrors("insert a new scan row", round, errs)
				require.Equal(t, 1, countTrue(inserted[:]), "exactly one scan row created")
			}
		})
	}
}

// countTrue counts the callers that report true.
func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
