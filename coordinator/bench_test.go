package coordinator_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// Hot-path micro-benchmarks on embedded SQLite (no server needed), so a regression in the claim or complete path
// shows up in review: go test ./coordinator -run '^$' -bench . -benchtime 2000x
// The end-to-end suite (throughput against River, claim cost against backlog, flush latency, round trips) is
// bench/cmd/pcbench, run by `make bench`.

// benchBacklog is the number of queued lane heads each benchmark starts from: the claim candidate query must not
// depend on it (B2).
const benchBacklog = 1000

func benchLedger(b *testing.B, backlog int) (*coordinator.Ledger, db.Store) {
	b.Helper()
	s := enginetest.Open(b, db.EngineSQLite)
	l := coordinator.NewLedger(s)
	for i := range backlog {
		benchEnqueue(b, l, i)
	}
	return l, s
}

func benchEnqueue(b *testing.B, l *coordinator.Ledger, i int) {
	b.Helper()
	lane := fmt.Sprintf("bench-lane-%d", i)
	_, err := l.Enqueue(context.Background(), coordinator.EnqueueRequest{LaneKey: hash(lane),
		Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
			return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: lane,
				LogicalKey: hash(fmt.Sprintf("bench-item-%d", i)), Payload: map[string]any{"n": i}, MaxAttempts: 5}, nil
		}})
	if err != nil {
		b.Fatal(err)
	}
}

func benchClaimOne(b *testing.B, l *coordinator.Ledger) coordinator.Claim {
	b.Helper()
	res, err := l.Claim(context.Background(), coordinator.ClaimRequest{Owner: "bench", Supported: supported, Slots: 1, Lease: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Claims) != 1 {
		b.Fatalf("claimed %d items, want 1", len(res.Claims))
	}
	return res.Claims[0]
}

// BenchmarkClaim times one claim pass (candidate query + one claim transaction) with one idle slot over a backlog of
// queued lane heads; each claimed item is completed outside the timer and a new one is enqueued, so the backlog
// stays constant.
func BenchmarkClaim(b *testing.B) { benchClaimComplete(b, true) }

// BenchmarkComplete times the final transaction (lock lane → key → item, verify, mark succeeded, finish the
// attempt, delete the key, advance the head) of a claimed item; claiming and refilling happen outside the timer.
func BenchmarkComplete(b *testing.B) { benchClaimComplete(b, false) }

// benchClaimComplete claims and completes one item per iteration over a constant backlog (a new item is enqueued
// for each one completed), timing only the claim or only the completion.
func benchClaimComplete(b *testing.B, timeClaim bool) {
	l, _ := benchLedger(b, benchBacklog)
	ctx := context.Background()
	next := benchBacklog
	b.ResetTimer()
	for range b.N {
		if !timeClaim {
			b.StopTimer()
		}
		c := benchClaimOne(b, l)
		if timeClaim {
			b.StopTimer()
		} else {
			b.StartTimer()
		}
		if _, err := l.Complete(ctx, c, coordinator.Result{Code: "processed"}, nil); err != nil {
			b.Fatal(err)
		}
		if !timeClaim {
			b.StopTimer()
		}
		benchEnqueue(b, l, next)
		next++
		b.StartTimer()
	}
}

// BenchmarkEnqueue times one Enqueue of a new item into an existing idle lane.
func BenchmarkEnqueue(b *testing.B) {
	l, _ := benchLedger(b, 0)
	ctx := context.Background()
	for i := range 100 {
		benchEnqueue(b, l, i)
	}
	for range 100 { // drain: the lanes exist and are idle
		c := benchClaimOne(b, l)
		if _, err := l.Complete(ctx, c, coordinator.Result{Code: "processed"}, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		lane := fmt.Sprintf("bench-lane-%d", i%100)
		_, err := l.Enqueue(ctx, coordinator.EnqueueRequest{LaneKey: hash(lane),
			Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
				return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: lane,
					LogicalKey: hash(fmt.Sprintf("bench-enqueue-%d", i)), Payload: map[string]any{"n": i}, MaxAttempts: 5}, nil
			}})
		if err != nil {
			b.Fatal(err)
		}
	}
}
