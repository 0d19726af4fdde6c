package coordinator

import (
	"context"
	"time"
)

// completer is a worker's group commit (docs/protocol.md#completer): the attempts hand it their finished
// completions and wait for their own result, and one goroutine commits what is ready as one CompleteMany
// transaction. A completion that arrives while nothing is committing goes at once, alone, through Complete, so an idle
// worker pays no window; the ones that arrive while a transaction runs make the next batch, bounded by max items
// and, when delay > 0, held open up to delay for more. Every item keeps its own result.
type completer struct {
	ledger *Ledger
	max    int
	delay  time.Duration
	in     chan pendingCompletion
	// Batches is called after each commit with the number of completions it carried (tests, metrics).
	batches func(n int)
}

type pendingCompletion struct {
	ctx  context.Context
	c    Completion
	done chan CompletionResult
}

func newCompleter(l *Ledger, maxItems int, delay time.Duration, batches func(int)) *completer {
	return &completer{ledger: l, max: maxItems, delay: delay, in: make(chan pendingCompletion), batches: batches}
}

// complete hands one completion to the completer and waits for its result. ctx is the attempt's: a completion
// abandoned before it was taken is not committed; once taken, it commits or fails with its batch.
func (k *completer) complete(ctx context.Context, c Completion) CompletionResult {
	p := pendingCompletion{ctx: ctx, c: c, done: make(chan CompletionResult, 1)}
	select {
	case k.in <- p:
	case <-ctx.Done():
		return CompletionResult{Err: ctx.Err()}
	}
	return <-p.done
}

// run commits batches until stop is closed; it must outlive every complete call (the worker closes stop after its
// attempts have returned). flush, once closed (the worker is shutting down), ends every open window at once.
func (k *completer) run(stop, flush <-chan struct{}) {
	batch := make([]pendingCompletion, 0, k.max)
	for {
		batch = batch[:0]
		select {
		case <-stop:
			return
		case p := <-k.in:
			batch = append(batch, p)
		}
		batch = k.gather(batch, flush)
		k.commit(batch)
	}
}

// gather adds what is already waiting, then, with a window, what arrives within it, up to max.
func (k *completer) gather(batch []pendingCompletion, flush <-chan struct{}) []pendingCompletion {
	for len(batch) < k.max {
		select {
		case p := <-k.in:
			batch = append(batch, p)
			continue
		default:
		}
		break
	}
	if k.delay <= 0 || len(batch) >= k.max {
		return batch
	}
	window := time.NewTimer(k.delay)
	defer window.Stop()
	for len(batch) < k.max {
		select {
		case p := <-k.in:
			batch = append(batch, p)
		case <-window.C:
			return batch
		case <-flush:
			return batch
		}
	}
	return batch
}

// commit runs one batch through CompleteMany. On the set-based path a single completion goes there too: its finish
// rides with the COMMIT (two round trips on PostgreSQL, where Complete takes three; as many on MySQL mode); on the
// other paths it goes through Complete (no savepoint). The transaction runs on the first item's context; items do
// not share cancellation, so it is detached from each attempt's (an attempt abandoned at shutdown cancels only what
// it has not handed over yet).
func (k *completer) commit(batch []pendingCompletion) {
	if len(batch) == 1 && k.ledger.path != PathSet {
		p := batch[0]
		item, err := k.ledger.Complete(p.ctx, p.c.Claim, p.c.Result, p.c.Commit)
		p.done <- CompletionResult{Item: item, Err: err}
	} else {
		cs := make([]Completion, len(batch))
		for i, p := range batch {
			cs[i] = p.c
		}
		ctx, cancel := batchContext(batch)
		results := k.ledger.CompleteMany(ctx, cs)
		cancel()
		for i, p := range batch {
			p.done <- results[i]
		}
	}
	if k.batches != nil {
		k.batches(len(batch))
	}
}

// batchContext is cancelled when every item's context is (a batch of abandoned attempts stops at once; one
// abandoned attempt cannot cancel the others' commit).
func batchContext(batch []pendingCompletion) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	// The watcher gets its own copy: the completer reuses the batch's backing array for the next batch while the
	// watcher may still be between two items.
	items := make([]context.Context, len(batch))
	for i, p := range batch {
		items[i] = p.ctx
	}
	go func() {
		for _, item := range items {
			select {
			case <-item.Done():
			case <-ctx.Done():
				return
			}
		}
		cancel()
	}()
	return ctx, cancel
}
