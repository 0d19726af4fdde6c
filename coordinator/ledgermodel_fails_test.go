package coordinator_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/powercontext/powercontext/db"
)

// The checker is proven able to fail: a seeded model divergence and the unsafe_nofence build must both be reported
// with a minimal sequence. If either test passes silently, the state-machine test has gone blind.

// recordingTB is a rapid.TB that records the outcome of a rapid.Check instead of failing the test.
type recordingTB struct {
	mu     sync.Mutex
	logs   []string
	failed bool
}

func (r *recordingTB) Helper()      {}
func (r *recordingTB) Name() string { return "TestLedgerModelSeeded" }
func (r *recordingTB) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Log(args ...any)                   { r.Logf("%s", fmt.Sprint(args...)) }
func (r *recordingTB) Skipf(format string, args ...any)  { r.Logf(format, args...); r.SkipNow() }
func (r *recordingTB) Skip(args ...any)                  { r.Log(args...); r.SkipNow() }
func (r *recordingTB) SkipNow()                          { runtime.Goexit() }
func (r *recordingTB) Errorf(format string, args ...any) { r.Logf(format, args...); r.Fail() }
func (r *recordingTB) Error(args ...any)                 { r.Log(args...); r.Fail() }
func (r *recordingTB) Fatalf(format string, args ...any) { r.Logf(format, args...); r.FailNow() }
func (r *recordingTB) Fatal(args ...any)                 { r.Log(args...); r.FailNow() }
func (r *recordingTB) FailNow()                          { r.Fail(); runtime.Goexit() }
func (r *recordingTB) Fail() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
}
func (r *recordingTB) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// setRapidFlag sets a rapid flag for the duration of the test.
func setRapidFlag(t *testing.T, name, value string) {
	old := flag.Lookup(name).Value.String()
	require.NoError(t, flag.Set(name, value))
	t.Cleanup(func() { _ = flag.Set(name, old) })
}

// shrinkTime lets rapid shrink until it can shrink no further. Its default (30 s) is a wall-clock budget: on a
// loaded machine shrinking stopped early and left a 16-action sequence, so the bound on the minimal sequence's length
// measured the machine's speed, not the checker. The shrinker stops by itself at a fixpoint long before this.
const shrinkTime = "20m"

// minimalActions counts the actions of the minimal failing sequence rapid printed.
func minimalActions(out string) int {
	_, failed, ok := strings.Cut(out, "Failed test output:")
	if !ok {
		return -1
	}
	return strings.Count(failed, `draw action:`)
}

// TestLedgerModelCatchesSeededDivergence runs the state machine against a model with a deliberately wrong rule (a
// finished head does not move its lane's head on) and requires rapid to report it with a short minimal sequence.
func TestLedgerModelCatchesSeededDivergence(t *testing.T) {
	setRapidFlag(t, "rapid.checks", "200")
	setRapidFlag(t, "rapid.nofailfile", "true")
	setRapidFlag(t, "rapid.shrinktime", shrinkTime)
	r := newModelRun(t, db.EngineSQLite)
	r.bug = "head"
	tb := &recordingTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rapid.Check(tb, r.sequence)
	}()
	<-done
	out := strings.Join(tb.logs, "\n")
	require.True(t, tb.Failed(), "the seeded divergence went unnoticed:\n%s", out)
	require.Contains(t, out, "[rapid] failed after")
	require.Contains(t, out, "lanes (next, head)")
	n := minimalActions(out)
	require.Positive(t, n, out)
	require.LessOrEqual(t, n, 6, "rapid should shrink to a few steps (enqueue, claim, complete):\n%s", out)
	t.Logf("seeded divergence found; minimal sequence of %d actions", n)
}

// TestLedgerModelCatchesNoFence builds the coordinator tests with -tags unsafe_nofence (Complete skips the fencing
// check) and requires the state machine to fail on SQLite with a minimal sequence in which a stale or cancelled
// claim commits. It compiles the package again, so it is skipped under -short.
func TestLedgerModelCatchesNoFence(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package with -tags unsafe_nofence")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(goBin, "test", "-tags", "unsafe_nofence", "-run", "^TestLedgerModel$/^sqlite$", "-count=1", "-v",
		"-timeout=30m", "-rapid.checks=300", "-rapid.nofailfile", "-rapid.shrinktime="+shrinkTime, ".")
	cmd.Env = append(os.Environ(), "PC_TEST_POSTGRES_DSN=", "PC_TEST_MYSQL_DSN=", "PC_TEST_REQUIRE_ENGINES=")
	outB, err := cmd.CombinedOutput()
	out := string(outB)
	require.Error(t, err, "the unsafe_nofence build passed the state machine:\n%s", out)
	require.Contains(t, out, "[rapid] failed after", out)
	require.Regexp(t, `complete(Many\[\d+\])?: ledger returned "[^"]*", model expects "(stale_work_claim|cancel_requested)"`, out)
	n := minimalActions(out)
	require.Positive(t, n, out)
	require.LessOrEqual(t, n, 8, "rapid should shrink to a few steps:\n%s", out)
	t.Logf("unsafe_nofence caught; minimal sequence of %d actions:\n%s", n, out[strings.Index(out, "Failed test output:"):])
}
