package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/sources"
)

// ErrNotSkippable means the operation's kind has no window to skip (maintenance, an erase).
var ErrNotSkippable = fmt.Errorf("lifecycle: this kind of operation cannot be skipped")

// SkippedWindow is the result payload of a skipped window: what the cursor moved past, and nothing processed.
type SkippedWindow struct {
	Type                 string `json:"type"`
	PreviousCursor       int64  `json:"previous_cursor"`
	CurrentCursor        int64  `json:"current_cursor"`
	HighWatermark        int64  `json:"high_watermark"`
	ProcessedSourceCount int64  `json:"processed_source_count"`
	SkippedSourceCount   int64  `json:"skipped_source_count"`
}

// SkipNote is the note a skip records on its Memory revision: bounded, positions and a principal name only.
func SkipNote(after, through int64, principal string) string {
	return fmt.Sprintf("skipped positions %d..%d by %s", after+1, through, principal)
}

// SkipFunc returns the ledger's skip of a failed window of kind (docs/protocol.md#skip), on behalf of principal:
// the consumer's cursor moves past the window by compare-and-set, nothing is extracted, and for Memory a revision
// of kind skip records the note "skipped positions a..b by <principal>" without changing any entry.
func SkipFunc(kind, principal string) (coordinator.SkipFunc, error) {
	var cursorName, publicKind string
	switch kind {
	case memory.Kind:
		cursorName, publicKind = memory.CursorName, memory.PublicKind
	case experience.Kind:
		cursorName, publicKind = experience.CursorName, experience.PublicKind
	default:
		return nil, ErrNotSkippable
	}
	return func(ctx context.Context, q db.Queries, item db.WorkItem) (coordinator.Result, coordinator.DomainCommit, error) {
		p, err := sources.DecodePayload(item)
		if err != nil {
			return coordinator.Result{}, nil, err
		}
		cur, err := sources.Cursor(ctx, q, item.ScopeID, cursorName)
		if err != nil {
			return coordinator.Result{}, nil, err
		}
		if _, err := sources.CheckCursor(cur, p); err != nil {
			return coordinator.Result{}, nil, err
		}
		result := SkippedWindow{Type: publicKind, PreviousCursor: p.After, CurrentCursor: p.Through,
			HighWatermark: p.HighWatermark, SkippedSourceCount: p.Through - p.After}
		commit := func(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time) error {
			return sources.Advance(ctx, q, item.ScopeID, p, now)
		}
		return coordinator.Result{Code: coordinator.ResultSkipped, Payload: result}, commit, nil
	}, nil
}
