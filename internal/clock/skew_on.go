//go:build clockskew

package clock

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// Skewed reports whether this build can shift the clock (the clockskew build tag).
const Skewed = true

// EnvSkew is read once, in a clockskew build only: a comma list of steps OFFSET[@AFTER], each a Go duration with
// an explicit sign, e.g. "+1h", "-1h3m", or "+0s,+1h@20s,-5m@40s" (real time, then one hour ahead from 20 s after
// the start, then five minutes behind from 40 s). AFTER is measured on the monotonic clock from process start, so
// the wall clock jumps exactly as a host clock stepped by an operator or by NTP would.
const EnvSkew = "PC_TEST_CLOCK_SKEW"

type step struct {
	after, offset time.Duration
}

var (
	start = time.Now()
	steps []step
	once  sync.Once
)

func offset() time.Duration {
	once.Do(func() {
		var err error
		if steps, err = parseSkew(os.Getenv(EnvSkew)); err != nil {
			panic(fmt.Sprintf("clock: %s: %v", EnvSkew, err))
		}
	})
	el := time.Since(start)
	var d time.Duration
	for _, s := range steps {
		if el >= s.after {
			d = s.offset
		}
	}
	return d
}

func parseSkew(v string) ([]step, error) {
	var out []step
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		off, after, _ := strings.Cut(part, "@")
		if !strings.HasPrefix(off, "+") && !strings.HasPrefix(off, "-") {
			return nil, fmt.Errorf("offset %q needs a sign", off)
		}
		o, err := time.ParseDuration(off)
		if err != nil {
			return nil, err
		}
		s := step{offset: o}
		if after != "" {
			if s.after, err = time.ParseDuration(after); err != nil {
				return nil, err
			}
		}
		if n := len(out); n > 0 && s.after < out[n-1].after {
			return nil, fmt.Errorf("step %q starts before the previous one", part)
		}
		out = append(out, s)
	}
	return out, nil
}
