package coordinator_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// TestConcurrentClaimsCommitOncePerItemInLaneOrder races two independent connection pools × 8 goroutines over
// 2,000 items in 50 lanes with random retryable failures and forced lease expiries, then checks the invariants:
// every item succeeded, exactly one domain commit per item, commit order = sequence order within each lane,
// fences strictly increase per item, and no engine deadlock error occurred.
func TestConcurrentClaimsCommitOncePerItemInLaneOrder(t *testing.T) {
	const workersPerDB = 8
	lanes, perLane := 50, 40
	if testing.Short() { // make race: the same race at a fifth of the items (the detector slows every access)
		lanes, perLane = 20, 20
	}
	total := lanes * perLane
	for _, engine := range enginetest.Engines(t) {
		t.Run(string(engine), func(t *testing.T) {
			started := time.Now()
			url := enginetest.MigratedDatabase(t, engine)
			stores := []db.Store{enginetest.OpenStore(t, url), enginetest.OpenStore(t, url)}
			ledgers := []*coordinator.Ledger{coordinator.NewLedger(stores[0]), coordinator.NewLedger(stores[1])}
			// The claim paths race each other: the first pool claims set-based (one statement, where the store has
			// it; else in batches), the second one transaction per candidate (docs/protocol.md#claim).
			ledgers[1].SetPath(coordinator.PathPerItem)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()

			var (
				succeeded, stale, failures, expiries, deadlocks atomic.Int64
				errMu                                           sync.Mutex
				firstErr                                        error
			)
			record := func(err error) {
				if errors.Is(err, db.ErrDeadlock) {
					deadlocks.Add(1)
				}
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				errMu.Unlock()
				cancel()
			}

			var wg sync.WaitGroup
			// Enqueuers: 5 goroutines alternating pools, each owning 10 lanes, windows in order.
			for g := range 5 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l := ledgers[g%2]
					for w := range perLane {
						for lane := g; lane < lanes; lane += 5 {
							laneName := fmt.Sprintf("lane-%02d", lane)
							window := fmt.Sprintf("w-%03d", w)
							_, err := l.Enqueue(ctx, coordinator.EnqueueRequest{LaneKey: hash(laneName),
								Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
									return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: laneName,
										LogicalKey: hash(laneName + "/" + window), Payload: map[string]any{"w": w}, MaxAttempts: 1000}, nil
								}})
							if err != nil {
								record(fmt.Errorf("enqueue: %w", err))
								return
							}
						}
					}
				}()
			}
			// Workers.
			for p := range 2 {
				for g := range workersPerDB {
					wg.Add(1)
					go func() {
						defer wg.Done()
						l, s := ledgers[p], stores[p]
						owner := fmt.Sprintf("worker-%d-%d", p, g)
						rng := rand.New(rand.NewPCG(uint64(p), uint64(g)))
						for ctx.Err() == nil && succeeded.Load() < int64(total) {
							stall := rng.IntN(100) < 3
							lease := 30 * time.Second
							if stall {
								lease = 150 * time.Millisecond
							}
							res, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: owner, Supported: supported, Slots: 1, Lease: lease})
							if err != nil {
								if ctx.Err() == nil {
									record(fmt.Errorf("claim: %w", err))
								}
								return
							}
							expiries.Add(int64(res.Expired))
							if len(res.Claims) == 0 {
								// Nothing to claim: back off briefly like a worker's poll (real time: the jitter
								// varies how claimers interleave; there is no event to wait for).
								time.Sleep(time.Duration(1+rng.IntN(3)) * time.Millisecond)
								continue
							}
							c := res.Claims[0]
							switch {
							case stall:
								// Simulate a worker that stalls past its lease: its commit must be refused.
								for {
									now, err := s.DBNow(ctx)
									if err != nil || now.After(c.LeaseExpiresAt) {
										break
									}
									// Real time: expiry is judged on the database clock only (testutil.WaitDBPast).
									time.Sleep(20 * time.Millisecond)
								}
								_, err := l.Complete(ctx, c, coordinator.Result{Code: "processed"}, func(context.Context, db.Queries, db.WorkItem, time.Time) error {
									return errors.New("a stale claim's domain commit ran")
								})
								if !errors.Is(err, coordinator.ErrStaleWorkClaim) {
									record(fmt.Errorf("stale complete: %v", err))
									return
								}
								stale.Add(1)
							case rng.IntN(100) < 10:
								if _, err := l.Fail(ctx, c, coordinator.Failure{Category: "provider", Code: "unavailable", Retryable: true}, 0); err != nil {
									record(fmt.Errorf("fail: %w", err))
									return
								}
								failures.Add(1)
							default:
								_, err := l.Complete(ctx, c, coordinator.Result{Code: "processed"}, func(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time) error {
									latest, err := q.MemoryRevisionLatest(ctx, item.ScopeID)
									if err != nil && !errors.Is(err, db.ErrNotFound) {
										return err
									}
									return q.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: item.ScopeID, Revision: latest.Revision + 1,
										WorkID: item.WorkID, WindowAfter: item.LaneSequence, WindowThrough: item.LaneSequence, CreatedAt: time.Now()})
								})
								if err != nil {
									record(fmt.Errorf("complete: %w", err))
									return
								}
								succeeded.Add(1)
							}
						}
					}()
				}
			}
			wg.Wait()
			require.NoError(t, firstErr)
			require.Zero(t, deadlocks.Load(), "engine deadlock errors")
			if succeeded.Load() != int64(total) { // say which items did not finish, and in what state
				for _, it := range listAll(t, ledgers[0]) {
					if it.Status != db.StatusSucceeded {
						t.Logf("unfinished: lane %s seq %d status %s attempts %d available_at %s lease_owner %q lease_expires_at %s error %s/%s",
							it.ScopeID, it.LaneSequence, it.Status, it.AttemptCount, it.AvailableAt.Format(time.RFC3339Nano),
							it.LeaseOwner, it.LeaseExpiresAt.Format(time.RFC3339Nano), it.ErrorCategory, it.ErrorCode)
					}
				}
			}
			require.Equal(t, int64(total), succeeded.Load())

			// Invariants, from the database.
			items := listAll(t, ledgers[0])
			require.Len(t, items, total)
			seqByWork := map[string]int64{}
			for _, it := range items {
				require.Equal(t, db.StatusSucceeded, it.Status)
				seqByWork[it.WorkID] = it.LaneSequence
				attempts, err := ledgers[0].Attempts(context.Background(), it.WorkID)
				require.NoError(t, err)
				require.Len(t, attempts, int(it.AttemptCount))
				for i := 1; i < len(attempts); i++ {
					require.Greater(t, attempts[i].Fence, attempts[i-1].Fence, "fences strictly increase per item")
				}
				require.Equal(t, db.OutcomeSucceeded, attempts[len(attempts)-1].Outcome)
			}
			commits := map[string]int{}
			sqlDB := enginetest.OpenSQLDB(t, url)
			for lane := range lanes {
				revs := memoryRevisions(t, sqlDB, fmt.Sprintf("lane-%02d", lane))
				require.Len(t, revs, perLane)
				for i, r := range revs {
					commits[r.WorkID]++
					if i > 0 {
						require.Greater(t, r.WindowAfter, revs[i-1].WindowAfter, "commit order follows lane order")
					}
					require.Equal(t, seqByWork[r.WorkID], r.WindowAfter)
				}
			}
			require.Len(t, commits, total)
			for id, n := range commits {
				require.Equal(t, 1, n, "domain commits of %s", id)
			}
			// Only the stalls the test made let a lease expire (the others are 30 s long), and each is recovered
			// once and refused once: an extra expiry is a claim its claimer never received.
			require.Equal(t, stale.Load(), expiries.Load(), "lease expiries recovered vs stalled claims refused")
			t.Logf("%s: %d items, %d lanes, %d retryable failures, %d stale commits refused, %d expiries recovered, wall %s",
				engine, total, lanes, failures.Load(), stale.Load(), expiries.Load(), time.Since(started).Round(time.Millisecond))
		})
	}
}

func listAll(t *testing.T, l *coordinator.Ledger) []db.WorkItem {
	t.Helper()
	var out []db.WorkItem
	p := coordinator.ListParams{Kinds: []string{testKind}, Limit: 500}
	for {
		page, err := l.List(context.Background(), p)
		require.NoError(t, err)
		out = append(out, page...)
		if len(page) < int(p.Limit) {
			return out
		}
		last := page[len(page)-1]
		p.BeforeCreatedAt, p.BeforeWorkID = last.CreatedAt, last.WorkID
	}
}

// memoryRevisions reads the revisions of scope (work_id and window_after only) in revision order.
func memoryRevisions(t *testing.T, sqlDB *sql.DB, scope string) []db.MemoryRevision {
	t.Helper()
	rows, err := sqlDB.Query("SELECT work_id, window_after FROM pc_memory_revisions WHERE scope_id = '" + scope + "' ORDER BY revision")
	require.NoError(t, err)
	defer rows.Close()
	var out []db.MemoryRevision
	for rows.Next() {
		var r db.MemoryRevision
		require.NoError(t, rows.Scan(&r.WorkID, &r.WindowAfter))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}
