package experience

import (
	"context"
	"encoding/json"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/sources"
)

// Incubation outcomes (the incubate API maps them to 200, 202 and 409, as the memory flush's).
const (
	IncubateIdle      = "idle"
	IncubateProcessed = "processed"
	IncubatePending   = "pending"
	IncubateBlocked   = "blocked"
	IncubateFailed    = "failed"
	IncubateCancelled = "cancelled"
)

// IncubateOutcome is the answer to a manual incubation request.
type IncubateOutcome struct {
	Status string
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
	Poll     time.Duration // longest wait poll interval (coordinator.Ledger.Await)
}

// Incubate enqueues (or joins) the scope's next incubation window and waits up to wait for it to finish.
func (in *Incubator) Incubate(ctx context.Context, scope string, wait time.Duration) (IncubateOutcome, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return IncubateOutcome{}, err
	}
	res, err := in.Ledger.Enqueue(ctx, in.Consumer.EnqueueRequest(scope))
	if err != nil {
		return IncubateOutcome{}, err
	}
	if res.Idle {
		store := in.Ledger.Store()
		cur, err := sources.Cursor(ctx, store, scope, CursorName)
		if err != nil {
			return IncubateOutcome{}, err
		}
		head, err := sources.Head(ctx, store, scope)
		if err != nil {
			return IncubateOutcome{}, err
		}
		return IncubateOutcome{Status: IncubateIdle, Result: Result{Type: PublicKind, PreviousCursor: cur.Position,
			CurrentCursor: cur.Position, HighWatermark: head}}, nil
	}
	if res.Created && in.Wake != nil {
		in.Wake()
	}
	if res.Item.Status == db.StatusFailed {
		return IncubateOutcome{Status: IncubateBlocked, Item: res.Item}, nil
	}
	item, err := in.Ledger.Await(ctx, res.Item, wait, in.Poll)
	if err != nil {
		return IncubateOutcome{}, err
	}
	switch item.Status {
	case db.StatusSucceeded:
		out := IncubateOutcome{Status: IncubateProcessed, Item: item}
		_ = json.Unmarshal(item.ResultPayload, &out.Result)
		return out, nil
	case db.StatusFailed:
		return IncubateOutcome{Status: IncubateFailed, Item: item}, nil
	case db.StatusCancelled:
		return IncubateOutcome{Status: IncubateCancelled, Item: item}, nil
	}
	return IncubateOutcome{Status: IncubatePending, Item: item}, nil
}
