package experience

import (
	"context"
	"encoding/json"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/sources"
)

// IncubateOutcome is the answer to a manual incubation request.
type IncubateOutcome struct {
	Status string      // a coordinator.Trigger* outcome
	Item   db.WorkItem // zero for idle
	Result Result      // for idle and processed
}

// Incubator is the manual trigger of experience incubation: it enqueues (or joins) a scope's next window — the same
// lane, key and item the scheduler's discovery would create, so the two never run a window twice — and waits for it
// like a memory flush, polling the ledger on the database so any replica can answer.
type Incubator struct {
	Ledger   *coordinator.Ledger
	Consumer sources.Consumer
	Wake     func()        // wakes an in-process worker after an enqueue (single_node); optional
	Poll     time.Duration // longest wait poll interval (coordinator.Ledger.Trigger)
}

// Incubate enqueues (or joins) the scope's next incubation window and waits up to wait for it to finish.
func (in *Incubator) Incubate(ctx context.Context, scope string, wait time.Duration) (IncubateOutcome, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return IncubateOutcome{}, err
	}
	t, err := in.Ledger.Trigger(ctx, in.Consumer.EnqueueRequest(scope), in.Wake, wait, in.Poll)
	if err != nil {
		return IncubateOutcome{}, err
	}
	out := IncubateOutcome{Status: t.Status, Item: t.Item}
	switch t.Status {
	case coordinator.TriggerIdle:
		store := in.Ledger.Store()
		cur, err := sources.Cursor(ctx, store, scope, CursorName)
		if err != nil {
			return IncubateOutcome{}, err
		}
		head, err := sources.Head(ctx, store, scope)
		if err != nil {
			return IncubateOutcome{}, err
		}
		out.Result = Result{Type: PublicKind, PreviousCursor: cur.Position, CurrentCursor: cur.Position, HighWatermark: head}
	case coordinator.TriggerProcessed:
		_ = json.Unmarshal(t.Item.ResultPayload, &out.Result)
		// Like a memory flush: the answer's high watermark is the journal head read now, not the joined window's
		// (which may predate the caller's captures); the operation's stored result keeps the window's.
		head, err := sources.Head(ctx, in.Ledger.Store(), scope)
		if err != nil {
			return IncubateOutcome{}, err
		}
		out.Result.HighWatermark = max(out.Result.HighWatermark, head)
	}
	return out, nil
}
