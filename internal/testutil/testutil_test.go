package testutil

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf and Errorf record instead of stopping the test.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}
func (r *recorder) Errorf(format string, args ...any) { r.Fatalf(format, args...) }
func (r *recorder) Cleanup(func())                    {}

func TestEventually(t *testing.T) {
	n := 0
	Eventually(t, time.Minute, func() bool { n++; return n == 3 }, "never")
	if n != 3 {
		t.Fatalf("cond ran %d times, want 3", n)
	}

	r := &recorder{TB: t}
	Eventually(r, 0, func() bool { return false }, "item %s", "x")
	if len(r.failed) != 1 || r.failed[0] != "not within 0s: item x" {
		t.Fatalf("failures %q", r.failed)
	}
}

type clock struct {
	now time.Time
	err error
}

func (c *clock) DBNow(context.Context) (time.Time, error) {
	c.now = c.now.Add(time.Second)
	return c.now, c.err
}

func TestWaitDBPast(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &clock{now: start}
	WaitDBPast(t, c, start.Add(3*time.Second+time.Millisecond))
	if want := start.Add(4 * time.Second); !c.now.Equal(want) {
		t.Fatalf("stopped at %s, want %s", c.now, want)
	}

	r := &recorder{TB: t}
	WaitDBPast(r, &clock{err: errors.New("down")}, start)
	if len(r.failed) != 1 {
		t.Fatalf("failures %q", r.failed)
	}
}

type runner struct {
	ran atomic.Bool
	err error
}

func (r *runner) Run(ctx context.Context) error {
	r.ran.Store(true)
	<-ctx.Done()
	return r.err
}

func TestRunWorker(t *testing.T) {
	w := &runner{}
	stop := RunWorker(t, w)
	stop()
	stop()
	if !w.ran.Load() {
		t.Fatal("the worker never ran")
	}

	r := &recorder{TB: t}
	RunWorker(r, &runner{err: errors.New("boom")})()
	if len(r.failed) != 1 || r.failed[0] != "worker returned: boom" {
		t.Fatalf("failures %q", r.failed)
	}
}
