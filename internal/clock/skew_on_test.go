//go:build clockskew

package clock

import (
	"testing"
	"time"
)

func TestParseSkew(t *testing.T) {
	got, err := parseSkew("+0s, +1h@20s,-5m@40s")
	if err != nil || len(got) != 3 || got[1] != (step{after: 20 * time.Second, offset: time.Hour}) ||
		got[2] != (step{after: 40 * time.Second, offset: -5 * time.Minute}) {
		t.Fatalf("parseSkew: %v %v", got, err)
	}
	for _, bad := range []string{"1h", "+1x", "+1h@x", "+1h@20s,-1h@10s"} {
		if _, err := parseSkew(bad); err == nil {
			t.Errorf("parseSkew(%q) accepted", bad)
		}
	}
}

func TestOffsetShiftsNow(t *testing.T) {
	t.Setenv(EnvSkew, "-1h")
	if d := time.Since(Now()); d < time.Hour-time.Second || d > time.Hour+time.Second {
		t.Fatalf("Now is %s behind, want one hour", d)
	}
}
