package app

import (
	"context"
	"errors"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// notifies reports whether this process sends and receives cross-process wake-ups: PostgreSQL with
// POWERCONTEXT_COORDINATION_NOTIFY on (docs/protocol.md#wake-ups); other engines poll.
func (c *Config) notifies(engine db.Engine) bool {
	return c.CoordinationNotify && engine == db.EnginePostgres
}

// listenWakeups runs the ledger's wake-up listener (its own connection, reconnected with backoff) until ctx is
// done. It is a part of the presence stage: a flush waiting on draining work still hears it finish.
func (r *Runtime) listenWakeups(ctx context.Context) error {
	connects := 0
	err := r.ledger.Listen(ctx, coordinator.ListenHooks{
		Connected: func() {
			connects++
			if connects == 1 {
				r.log.Info().Msg("wake-up listener connected")
				return
			}
			r.log.Info().Int("reconnects", connects-1).Msg("wake-up listener reconnected; woke every worker and waiter")
		},
		Lost: func(err error) {
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("wake-up listener connection lost; polling until it is back")
		},
	})
	if ctx.Err() != nil || errors.Is(err, coordinator.ErrNoNotifications) {
		return nil
	}
	return err
}
