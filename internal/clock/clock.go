// Package clock is the process's wall clock: every time value the service stores, sends, logs or compares with a
// clock outside the process is read here (Now, Until), never with time.Now directly. Durations measured inside the
// process (start := time.Now() … time.Since(start)), timers and tickers use Go's monotonic clock and stay on the
// time package: a wall-clock skew or step does not change them in a real deployment either.
//
// The protocol decides on database time only (docs/protocol.md#database-time), so a host whose clock is off must not
// change what the fleet commits. The e2e clock-skew round proves it. libfaketime cannot shift a Go program (Go reads
// the clock through the vDSO, not through libc, even when the binary is linked dynamically), so the proof builds the
// binary with the build tag clockskew: only then does PC_TEST_CLOCK_SKEW shift this clock (see skew_on.go). A normal
// build compiles the offset to a constant zero and never reads the variable.
package clock

import "time"

// Now returns the current wall-clock time (shifted only in a clockskew test build).
func Now() time.Time { return time.Now().Add(offset()) }

// Until returns the duration until t, a time that came from outside the process (an HTTP date, a stored time).
func Until(t time.Time) time.Duration { return t.Sub(Now()) }

// Since returns the time elapsed since t, a time read from Now (for a duration measured inside the process, read
// time.Now and use time.Since instead).
func Since(t time.Time) time.Duration { return Now().Sub(t) }
