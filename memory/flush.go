package memory

import (
	"context"
	"encoding/json"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/sources"
)

// Flush outcomes (the flush API maps them to 200, 202 and 409).
const (
	FlushIdle      = coordinator.TriggerIdle
	FlushProcessed = coordinator.TriggerProcessed
	FlushPending   = coordinator.TriggerPending
	FlushBlocked   = coordinator.TriggerBlocked
	FlushFailed    = coordinator.TriggerFailed
	FlushCancelled = coordinator.TriggerCancelled
)

// FlushOutcome is the answer to a flush request.
type FlushOutcome struct {
	Status string
	Item   db.WorkItem // zero for idle
	Result FlushResult // for idle and processed
}

// Flusher enqueues a scope's next memory window and optionally waits for it, polling the ledger on the database
// so any replica can answer.
type Flusher struct {
	Ledger   *coordinator.Ledger
	Consumer sources.Consumer
	Wake     func()        // wakes an in-process worker after an enqueue (single_node); optional
	Poll     time.Duration // longest wait poll interval (default 100 ms; coordinator.Ledger.Trigger)
}

// Flush enqueues (or joins) the scope's next window and waits up to wait for it to finish.
func (f *Flusher) Flush(ctx context.Context, scope string, wait time.Duration) (FlushOutcome, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return FlushOutcome{}, err
	}
	t, err := f.Ledger.Trigger(ctx, f.Consumer.EnqueueRequest(scope), f.Wake, wait, f.Poll)
	if err != nil {
		return FlushOutcome{}, err
	}
	if t.Status == FlushIdle {
		return f.idle(ctx, scope)
	}
	out := FlushOutcome{Status: t.Status, Item: t.Item}
	if t.Status == FlushProcessed {
		_ = json.Unmarshal(t.Item.ResultPayload, &out.Result)
		// The window may have been computed before the caller's own captures (the flush joined it): the answer's
		// high watermark is the journal head read now, so current_cursor < high_watermark whenever a Source
		// captured before the request is not yet in Memory (the operation's stored result keeps the window's).
		head, err := sources.Head(ctx, f.Ledger.Store(), scope)
		if err != nil {
			return FlushOutcome{}, err
		}
		out.Result.HighWatermark = max(out.Result.HighWatermark, head)
	}
	return out, nil
}

func (f *Flusher) idle(ctx context.Context, scope string) (FlushOutcome, error) {
	store := f.Ledger.Store()
	cur, err := sources.Cursor(ctx, store, scope, CursorName)
	if err != nil {
		return FlushOutcome{}, err
	}
	head, err := sources.Head(ctx, store, scope)
	if err != nil {
		return FlushOutcome{}, err
	}
	out := FlushOutcome{Status: FlushIdle, Result: FlushResult{Type: PublicKind, PreviousCursor: cur.Position,
		CurrentCursor: cur.Position, HighWatermark: head}}
	latest, _, err := current(ctx, store, scope)
	if err != nil {
		return FlushOutcome{}, err
	}
	if latest.Revision > 0 {
		out.Result.Memory = &RevisionResult{Revision: latest.Revision}
	}
	return out, nil
}
