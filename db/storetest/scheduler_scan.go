package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// schedulerScanCases are the cases of pc_scheduler_scans (scheduler_scan.sql).
var schedulerScanCases = []storeCase{
	{"SchedulerScanUpdate/CompareAndSet", testSchedulerScan},
}

func testSchedulerScan(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scan := db.SchedulerScan{Discoverer: "memory", NextRunAt: now.Add(time.Minute), StateVersion: 1, UpdatedAt: now}

	_, err := s.SchedulerScanGet(ctx, scan.Discoverer)
	require.ErrorIs(t, err, db.ErrNotFound)

	inserted, err := s.SchedulerScanInsertIfAbsent(ctx, scan)
	require.NoError(t, err)
	require.True(t, inserted)
	again := scan
	again.NextRunAt = now.Add(time.Hour)
	again.Continuation = "zzz"
	inserted, err = s.SchedulerScanInsertIfAbsent(ctx, again)
	require.NoError(t, err)
	require.False(t, inserted)

	got, err := s.SchedulerScanGet(ctx, scan.Discoverer)
	require.NoError(t, err)
	require.Equal(t, scan, got)

	next := db.SchedulerScan{
		Discoverer: scan.Discoverer, NextRunAt: now.Add(2 * time.Minute), Continuation: "scope-0042",
		UpdatedAt: now.Add(time.Second),
	}
	n, err := s.SchedulerScanUpdate(ctx, db.SchedulerScanUpdateParams{Scan: next, ExpectedVersion: 1})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	next.StateVersion = 2
	got, err = s.SchedulerScanGet(ctx, scan.Discoverer)
	require.NoError(t, err)
	require.Equal(t, next, got)

	// A stale version changes nothing.
	stale := next
	stale.Continuation = "scope-9999"
	n, err = s.SchedulerScanUpdate(ctx, db.SchedulerScanUpdateParams{Scan: stale, ExpectedVersion: 1})
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	got, err = s.SchedulerScanGet(ctx, scan.Discoverer)
	require.NoError(t, err)
	require.Equal(t, next, got)

	// Clearing the continuation writes NULL.
	done := next
	done.Continuation = ""
	done.NextRunAt = now.Add(time.Hour)
	n, err = s.SchedulerScanUpdate(ctx, db.SchedulerScanUpdateParams{Scan: done, ExpectedVersion: 2})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	done.StateVersion = 3
	got, err = s.SchedulerScanGet(ctx, scan.Discoverer)
	require.NoError(t, err)
	require.Equal(t, done, got)

	n, err = s.SchedulerScanUpdate(ctx, db.SchedulerScanUpdateParams{Scan: db.SchedulerScan{Discoverer: "missing", NextRunAt: now, UpdatedAt: now}, ExpectedVersion: 1})
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
}
