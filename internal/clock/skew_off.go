//go:build !clockskew

package clock

import "time"

// Skewed reports whether this build can shift the clock (the clockskew build tag).
const Skewed = false

func offset() time.Duration { return 0 }
