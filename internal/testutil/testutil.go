// Package testutil holds the helpers the tests of several packages share, so that each exists once: waiting for a
// condition with a deadline (never a fixed sleep before an assertion), waiting for the database clock, and running
// a worker for the length of a test. It imports nothing of this module, so any package's tests — internal ones
// included — may use it. It is imported only by tests.
package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Poll is how often Eventually and WaitDBPast look again.
const Poll = 5 * time.Millisecond

// Eventually waits until cond returns true, checking at once and then every Poll, and fails the test with msg
// when within passes first. cond runs on the test's goroutine, so it may call require. within is a deadline for a
// condition that must come true, not a speed claim: choose it generously (seconds), so a loaded machine only makes
// the test slower.
func Eventually(t testing.TB, within time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("not within %s: "+msg, append([]any{within}, args...)...)
			return
		}
		time.Sleep(Poll)
	}
}

// Clock is the database clock (db.Store and db.Queries have it).
type Clock interface {
	DBNow(ctx context.Context) (time.Time, error)
}

// WaitDBPast waits until the database clock is after tm. Real time is the point: lease expiry, retention cut-offs
// and windows are judged on the database clock only (docs/protocol.md#database-time), which no query lets a test
// move, so the test polls that clock (for at most 30 s).
func WaitDBPast(t testing.TB, c Clock, tm time.Time) {
	t.Helper()
	Eventually(t, 30*time.Second, func() bool {
		now, err := c.DBNow(context.Background())
		if err != nil {
			t.Fatalf("database clock: %v", err)
			return true
		}
		return now.After(tm)
	}, "database clock did not pass %s", tm)
}

// Runner is a loop that runs until its context is cancelled (a coordinator.Worker, a scheduler).
type Runner interface {
	Run(ctx context.Context) error
}

// RunWorker starts r in a goroutine and returns stop, which cancels it, waits for it to return and requires that
// it returned no error. stop is also registered as a cleanup, so a test that does not need to stop early may drop
// it; calling it twice is harmless.
func RunWorker(t testing.TB, r Runner) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var stopped bool
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker returned: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// NpmBin returns the absolute path of command bin of the npm packages pinned in dir (its package.json and
// package-lock.json), running `npm ci` there first when node_modules is missing or older than the lock file. The
// caller has already checked that node and npm exist (and decided whether their absence skips or fails).
func NpmBin(t testing.TB, dir, bin string) string {
	t.Helper()
	path := filepath.Join(dir, "node_modules", ".bin", bin)
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if _, binErr := os.Stat(path); err != nil || binErr != nil || installed.ModTime().Before(lock.ModTime()) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v: %s", dir, err, out)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return abs
}
