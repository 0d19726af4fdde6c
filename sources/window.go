package sources

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// Consumer describes one cursor-driven consumer of the journal (memory flush, experience incubation).
type Consumer struct {
	Kind        string // ledger kind
	CursorName  string
	LanePrefix  string // lane key = sha256(LanePrefix + ":" + scope)
	Limit       int64  // window size
	MaxAttempts int32
}

// PayloadVersion of window payloads.
const PayloadVersion = 1

// WindowPayload is the work item payload of a window (payload_version 1).
type WindowPayload struct {
	CursorName       string `json:"cursor_name"`
	CursorGeneration int64  `json:"cursor_generation"`
	After            int64  `json:"after"`
	Through          int64  `json:"through"`
	HighWatermark    int64  `json:"high_watermark"`
}

// LaneKey is the consumer's lane for a scope.
func (c Consumer) LaneKey(scope string) string { return sha256Hex([]byte(c.LanePrefix + ":" + scope)) }

// LogicalKey is sha256(JSON [kind, scope_id, cursor_name, cursor_generation, after]) with compact separators and
// no HTML escaping. through and the high-watermark are not part of it, so every enqueue of the same unadvanced
// cursor joins one item.
func (c Consumer) LogicalKey(scope string, generation, after int64) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode([]any{c.Kind, scope, c.CursorName, generation, after})
	return sha256Hex(bytes.TrimRight(buf.Bytes(), "\n"))
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Cursor reads a cursor; a missing row is (0, 0).
func Cursor(ctx context.Context, q db.Queries, scope, name string) (db.SourceCursor, error) {
	c, err := q.SourceCursorGet(ctx, db.SourceCursorGetParams{ScopeID: scope, CursorName: name})
	if errors.Is(err, db.ErrNotFound) {
		return db.SourceCursor{ScopeID: scope, CursorName: name}, nil
	}
	return c, err
}

// EnqueueRequest returns the ledger request for the scope's next window. Its SpecFunc runs under the lane lock:
// it reads the cursor and the journal head there, so the window always starts at the committed cursor.
func (c Consumer) EnqueueRequest(scope string) coordinator.EnqueueRequest {
	return coordinator.EnqueueRequest{LaneKey: c.LaneKey(scope), Spec: func(ctx context.Context, q db.Queries) (*coordinator.EnqueueSpec, error) {
		// A scope being erased has no next window: its data is going away (docs/protocol.md#erasing-a-scope).
		if erasing, err := Erasing(ctx, q, scope); err != nil || erasing {
			return nil, err
		}
		cur, err := Cursor(ctx, q, scope, c.CursorName)
		if err != nil {
			return nil, err
		}
		head, err := Head(ctx, q, scope)
		if err != nil {
			return nil, err
		}
		if head <= cur.Position {
			return nil, nil
		}
		through := min(head, cur.Position+c.Limit)
		return &coordinator.EnqueueSpec{
			Kind: c.Kind, PayloadVersion: PayloadVersion, ScopeID: scope,
			LogicalKey: c.LogicalKey(scope, cur.Generation, cur.Position),
			Payload: WindowPayload{CursorName: c.CursorName, CursorGeneration: cur.Generation, After: cur.Position,
				Through: through, HighWatermark: head},
			MaxAttempts: c.MaxAttempts,
		}, nil
	}}
}

// DecodePayload reads a window payload (payload/invalid_payload, not retryable, when malformed).
func DecodePayload(item db.WorkItem) (WindowPayload, error) {
	var p WindowPayload
	if item.PayloadVersion != PayloadVersion || json.Unmarshal(item.Payload, &p) != nil ||
		p.After < 0 || p.Through <= p.After || p.CursorGeneration < 0 || p.CursorName == "" {
		return p, coordinator.NewHandlerError(coordinator.CategoryPayload, coordinator.CodeInvalidPayload, false)
	}
	return p, nil
}

// WindowState is the position of a window check in Prepare.
type WindowState int

// The window states CheckCursor reports.
const (
	WindowReady            WindowState = iota // cursor exactly at (after, generation)
	WindowAlreadyCommitted                    // an earlier attempt committed the window, or a budget-fitting prefix of it
)

// CheckCursor compares the committed cursor with the window: already committed, ready, or
// conflict/cursor_changed (not retryable). A cursor past the window's start with a later generation means an
// earlier attempt committed it — up to through, or up to the end of the prefix that fit the request budget (Fit) —
// and only its answer was lost.
func CheckCursor(cur db.SourceCursor, p WindowPayload) (WindowState, error) {
	if cur.Position >= p.Through || (cur.Position > p.After && cur.Generation > p.CursorGeneration) {
		return WindowAlreadyCommitted, nil
	}
	if cur.Position != p.After || cur.Generation != p.CursorGeneration {
		return 0, coordinator.NewHandlerError(coordinator.CategoryConflict, coordinator.CodeCursorChanged, false)
	}
	return WindowReady, nil
}

// OpenWindow is the common start of a window handler's prepare: decode the item's payload, read the consumer's
// committed cursor and compare it with the window.
func OpenWindow(ctx context.Context, q db.Queries, item db.WorkItem, cursorName string) (WindowPayload, db.SourceCursor, WindowState, error) {
	p, err := DecodePayload(item)
	if err != nil {
		return p, db.SourceCursor{}, 0, err
	}
	cur, err := Cursor(ctx, q, item.ScopeID, cursorName)
	if err != nil {
		return p, cur, 0, err
	}
	state, err := CheckCursor(cur, p)
	return p, cur, state, err
}

// ReadWindow reads the window's Sources and checks they are complete and contiguous
// (retention/source_window_unavailable, not retryable, otherwise).
func ReadWindow(ctx context.Context, q db.Queries, scope string, p WindowPayload) ([]db.Source, error) {
	srcs, err := q.SourceListRange(ctx, db.SourceListRangeParams{ScopeID: scope, AfterPosition: p.After, ThroughPosition: p.Through})
	if err != nil {
		return nil, err
	}
	if int64(len(srcs)) != p.Through-p.After {
		return nil, coordinator.NewHandlerError(coordinator.CategoryRetention, coordinator.CodeWindowUnavailable, false)
	}
	for i, s := range srcs {
		if s.JournalPosition != p.After+int64(i)+1 {
			return nil, coordinator.NewHandlerError(coordinator.CategoryRetention, coordinator.CodeWindowUnavailable, false)
		}
	}
	return srcs, nil
}

// Advance locks the cursor (the last lock of the global order) inside the final transaction, re-checks it is
// exactly at the window start, and moves it to through with generation+1 by compare-and-set.
func Advance(ctx context.Context, q db.Queries, scope string, p WindowPayload, now time.Time) error {
	conflict := coordinator.NewHandlerError(coordinator.CategoryConflict, coordinator.CodeCursorChanged, false)
	cur, err := q.SourceCursorLock(ctx, db.SourceCursorLockParams{ScopeID: scope, CursorName: p.CursorName})
	if errors.Is(err, db.ErrNotFound) {
		// Creation is serialised by the lane lock we hold, so a plain insert is safe on every engine.
		if p.After != 0 || p.CursorGeneration != 0 {
			return conflict
		}
		return q.SourceCursorInsert(ctx, db.SourceCursor{ScopeID: scope, CursorName: p.CursorName, Position: p.Through, Generation: 1, UpdatedAt: now})
	}
	if err != nil {
		return err
	}
	if !unsafeSkipCursorCAS && (cur.Position != p.After || cur.Generation != p.CursorGeneration) {
		return conflict
	}
	n, err := q.SourceCursorAdvance(ctx, db.SourceCursorAdvanceParams{Cursor: db.SourceCursor{ScopeID: scope, CursorName: p.CursorName, Position: p.Through,
		Generation: p.CursorGeneration + 1, UpdatedAt: now}, FromPosition: p.After, FromGeneration: p.CursorGeneration})
	if err != nil {
		return err
	}
	if n != 1 && !unsafeSkipCursorCAS {
		return conflict
	}
	return nil
}

// Discoverer pages scopes whose journal is ahead of the consumer's cursor and returns their window requests.
type Discoverer struct {
	Consumer Consumer
	Store    db.Store
	Every    time.Duration
	Label    string
}

// Name implements coordinator.Discoverer: the name of its scan.
func (d Discoverer) Name() string { return d.Label }

// Interval implements coordinator.Discoverer: how often it runs.
func (d Discoverer) Interval() time.Duration { return d.Every }

// Page implements coordinator.Discoverer: one page of enqueue requests.
func (d Discoverer) Page(ctx context.Context, continuation string, size int) ([]coordinator.EnqueueRequest, string, error) {
	heads, err := d.Store.SourceJournalHeadListPending(ctx, db.SourceJournalHeadListPendingParams{CursorName: d.Consumer.CursorName, AfterScopeID: continuation, Limit: int32(size)})
	if err != nil {
		return nil, "", err
	}
	reqs := make([]coordinator.EnqueueRequest, 0, len(heads))
	for _, h := range heads {
		reqs = append(reqs, d.Consumer.EnqueueRequest(h.ScopeID))
	}
	next := ""
	if len(heads) == size {
		next = heads[len(heads)-1].ScopeID
	}
	return reqs, next, nil
}
