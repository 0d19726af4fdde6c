package client

import (
	"context"
	"time"
)

// WithClock replaces the clock used for operation deadlines and poll pauses (tests only).
func WithClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.now, c.sleep = now, sleep }
}
