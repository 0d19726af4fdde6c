//go:build linux

package e2e

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// A verdict is the one-line outcome of a round, printed again after every test of the package has run, so the last
// lines of a failing `make e2e` name the cause: a protocol violation (which counter, which items), a service fault
// (a crash, a 500, a hang), or the harness's own budget (the machine was too slow to reach the round's minimums in
// the time the test binary had left).
type verdict struct {
	round, engine string
	failed        bool
	causes        []string // "protocol: …", "service: …", "harness: …"
	line          string   // the summary counters
}

var verdicts struct {
	sync.Mutex
	list []*verdict
}

// newVerdict registers the verdict of one round. If the test fails without naming a cause (a require in a phase
// the round did not expect to fail in), the cause is the phase the round was in.
func newVerdict(t *testing.T, round string, engine string, phase func() string) *verdict {
	v := &verdict{round: round, engine: engine}
	verdicts.Lock()
	verdicts.list = append(verdicts.list, v)
	verdicts.Unlock()
	t.Cleanup(func() {
		verdicts.Lock()
		defer verdicts.Unlock()
		if t.Failed() {
			v.failed = true
			if len(v.causes) == 0 {
				v.causes = append(v.causes, "harness: the round stopped during "+phase()+" (see the first error above)")
			}
		}
		if t.Skipped() && !v.failed {
			v.line = "skipped"
		}
	})
	return v
}

// cause records a reason for failure; the round's assertions fail the test.
func (v *verdict) cause(format string, args ...any) {
	verdicts.Lock()
	defer verdicts.Unlock()
	v.causes = append(v.causes, fmt.Sprintf(format, args...))
}

func (v *verdict) summary(line string) {
	verdicts.Lock()
	defer verdicts.Unlock()
	v.line = line
}

func TestMain(m *testing.M) {
	code := m.Run()
	verdicts.Lock()
	list := verdicts.list
	verdicts.Unlock()
	if len(list) > 0 {
		var sb strings.Builder
		sb.WriteString("\n=== e2e verdicts\n")
		for _, v := range list {
			state := "ok  "
			if v.failed {
				state = "FAIL"
			}
			fmt.Fprintf(&sb, "%s %-9s %-9s %s\n", state, v.round, v.engine, v.line)
			for _, c := range v.causes {
				fmt.Fprintf(&sb, "       cause: %s\n", c)
			}
		}
		os.Stdout.WriteString(sb.String())
	}
	os.Exit(code)
}

// budget hands out the wall time the test binary has left (go test -timeout) to the phases of a round, keeping a
// reserve for the checks and the cleanup. A phase that waits for progress asks until when it may wait; when the
// deadline is near it stops and the round reports a harness cause instead of dying in go test's timeout panic.
type budget struct {
	deadline time.Time // zero: no -timeout
}

func newBudget(t *testing.T) budget {
	d, ok := t.Deadline()
	if !ok {
		return budget{}
	}
	return budget{deadline: d.Add(-90 * time.Second)} // checks, logs, stopping the fleet
}

func (b budget) exhausted() bool { return !b.deadline.IsZero() && time.Now().After(b.deadline) }
