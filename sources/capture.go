package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// Limits of a captured Source.
const (
	MaxScopeBytes    = 256
	MaxSourceIDBytes = 256
	MaxTypeBytes     = 64
	MaxContentBytes  = 64 * 1024
	MaxMetadataBytes = 16 * 1024
	DefaultType      = "content"
)

// ValidationError names the offending field of a capture (HTTP 422 with details.field).
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

// CaptureRequest is one Source to capture.
type CaptureRequest struct {
	ScopeID    string
	SourceID   string // optional; a random id is assigned when empty
	SourceType string // optional; "content" when empty
	Content    string
	Metadata   json.RawMessage // optional JSON object
}

// CaptureResult reports where the Source sits in its scope's journal.
type CaptureResult struct {
	ScopeID         string
	SourceID        string
	JournalPosition int64
	Created         bool
}

// Journal captures and reads Sources.
type Journal struct{ store db.Store }

// NewJournal returns the journal over store.
func NewJournal(store db.Store) *Journal { return &Journal{store: store} }

// ValidateScope checks a scope id: 1..256 bytes of valid UTF-8.
func ValidateScope(scope string) error {
	if len(scope) == 0 || len(scope) > MaxScopeBytes {
		return &ValidationError{Field: "scope_id", Message: "must be 1..256 bytes"}
	}
	if !utf8.ValidString(scope) || strings.IndexByte(scope, 0) >= 0 {
		return &ValidationError{Field: "scope_id", Message: "must be valid UTF-8 without NUL"}
	}
	return nil
}

// validText reports whether s is valid UTF-8 without NUL bytes (PostgreSQL text cannot hold NUL).
func validText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

func (r *CaptureRequest) normalise() (metadata []byte, err error) {
	if err := ValidateScope(r.ScopeID); err != nil {
		return nil, err
	}
	if r.SourceID == "" {
		r.SourceID = uuid.NewString()
	}
	if len(r.SourceID) > MaxSourceIDBytes || !validText(r.SourceID) {
		return nil, &ValidationError{Field: "source_id", Message: "must be 1..256 bytes of UTF-8 without NUL"}
	}
	if r.SourceType == "" {
		r.SourceType = DefaultType
	}
	if len(r.SourceType) > MaxTypeBytes || !validText(r.SourceType) {
		return nil, &ValidationError{Field: "source_type", Message: "must be 1..64 bytes of UTF-8 without NUL"}
	}
	if len(r.Content) == 0 || len(r.Content) > MaxContentBytes {
		return nil, &ValidationError{Field: "content", Message: fmt.Sprintf("must be 1..%d bytes", MaxContentBytes)}
	}
	if !validText(r.Content) {
		return nil, &ValidationError{Field: "content", Message: "must be valid UTF-8 without NUL"}
	}
	if len(r.Metadata) == 0 || string(r.Metadata) == "null" {
		return []byte("{}"), nil
	}
	if len(r.Metadata) > MaxMetadataBytes {
		return nil, &ValidationError{Field: "metadata", Message: fmt.Sprintf("must be at most %d bytes", MaxMetadataBytes)}
	}
	m, err := coordinator.CanonicalJSON([]byte(r.Metadata))
	if err != nil {
		return nil, &ValidationError{Field: "metadata", Message: "must be a JSON object"}
	}
	// Numbers are kept exact, but one beyond a double (1e999) is one no JSON client and no import can read back.
	var v any
	if json.Unmarshal(m, &v) != nil {
		return nil, &ValidationError{Field: "metadata", Message: "numbers must be within the range of a double"}
	}
	return m, nil
}

// Capture appends a Source to its scope's journal, or returns the existing one for a repeated
// (scope_id, source_id). One transaction: lock the journal head (created by an autocommitted insert-if-absent
// first, docs/protocol.md#creating-rows), re-check the source id, insert at head+1 and advance the head.
func (j *Journal) Capture(ctx context.Context, req CaptureRequest) (CaptureResult, error) {
	metadata, err := req.normalise()
	if err != nil {
		return CaptureResult{}, err
	}
	if existing, err := j.store.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: req.ScopeID, SourceID: req.SourceID}); err == nil {
		return CaptureResult{ScopeID: existing.ScopeID, SourceID: existing.SourceID, JournalPosition: existing.JournalPosition}, nil
	} else if !errors.Is(err, db.ErrNotFound) {
		return CaptureResult{}, err
	}
	// A scope erase deletes the head; one that lands between the insert and the lock sends the capture round again.
	for range headCreateAttempts {
		res, err := j.capture(ctx, req, metadata)
		if !errors.Is(err, errHeadMissing) {
			return res, err
		}
	}
	return CaptureResult{}, errors.New("sources: journal head vanished after creation")
}

// errHeadMissing: the head was gone (or still being re-created) when the capture transaction locked it.
var errHeadMissing = errors.New("sources: journal head missing")

// headCreateAttempts bounds how often a capture finds its journal head missing (see Capture).
const headCreateAttempts = 4

func (j *Journal) capture(ctx context.Context, req CaptureRequest, metadata []byte) (CaptureResult, error) {
	if err := coordinator.CreateRow(ctx, func(ctx context.Context) (bool, error) {
		return j.store.SourceJournalHeadInsertIfAbsent(ctx, req.ScopeID)
	}); err != nil {
		return CaptureResult{}, err
	}
	var res CaptureResult
	err := j.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		head, err := q.SourceJournalHeadLock(ctx, req.ScopeID)
		// Missing: erased since the insert. Deadlocked: this first statement, holding nothing yet, queued behind
		// other captures' inserts racing over a just-erased head (InnoDB). Either way nothing was done: go round.
		if errors.Is(err, db.ErrNotFound) || errors.Is(err, db.ErrDeadlock) {
			return errHeadMissing
		}
		if err != nil {
			return err
		}
		if erasing, err := Erasing(ctx, q, req.ScopeID); err != nil || erasing {
			if err == nil {
				err = ErrScopeErasing
			}
			return err
		}
		if existing, err := q.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: req.ScopeID, SourceID: req.SourceID}); err == nil {
			res = CaptureResult{ScopeID: existing.ScopeID, SourceID: existing.SourceID, JournalPosition: existing.JournalPosition}
			return nil
		} else if !errors.Is(err, db.ErrNotFound) {
			return err
		}
		now, err := q.DBNow(ctx)
		if err != nil {
			return err
		}
		pos := head.Position + 1
		if err := q.SourceInsert(ctx, db.Source{ScopeID: req.ScopeID, JournalPosition: pos, SourceID: req.SourceID,
			SourceType: req.SourceType, Content: req.Content, Metadata: metadata, CreatedAt: now}); err != nil {
			return err
		}
		head.Position, head.UpdatedAt = pos, now
		if err := q.SourceJournalHeadUpdate(ctx, head); err != nil {
			return err
		}
		res = CaptureResult{ScopeID: req.ScopeID, SourceID: req.SourceID, JournalPosition: pos, Created: true}
		return nil
	})
	return res, err
}

// List returns up to limit Sources of a scope after a journal position, in journal order.
func (j *Journal) List(ctx context.Context, scope string, after int64, limit int) ([]db.Source, error) {
	if err := ValidateScope(scope); err != nil {
		return nil, err
	}
	if after < 0 {
		return nil, &ValidationError{Field: "after", Message: "must be >= 0"}
	}
	if limit < 1 || limit > 500 {
		return nil, &ValidationError{Field: "limit", Message: "must be 1..500"}
	}
	return j.store.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, AfterPosition: after, Limit: int32(limit)})
}

// Head returns a scope's journal high-watermark (0 when nothing was captured).
func Head(ctx context.Context, q db.Queries, scope string) (int64, error) {
	h, err := q.SourceJournalHeadGet(ctx, scope)
	if errors.Is(err, db.ErrNotFound) {
		return 0, nil
	}
	return h.Position, err
}

// ErrScopeErasing means the scope is being erased (a scope_erase operation is its erase lane's head, running or
// failed); nothing can be captured into it until the erase finishes or is cancelled (HTTP 409 scope_erasing).
var ErrScopeErasing = errors.New("sources: the scope is being erased")

// EraseLaneKey is the lane of a scope's erase operations (docs/protocol.md#erasing-a-scope).
func EraseLaneKey(scope string) string { return sha256Hex([]byte("erase:" + scope)) }

// Erasing reports whether an erase of the scope is live: its erase lane has a head. A plain read: callers hold
// the journal head (capture) or a consumer's lane (enqueue), never the erase lane, whose commit takes those after
// its own (docs/protocol.md#lock-order).
func Erasing(ctx context.Context, q db.Queries, scope string) (bool, error) {
	lane, err := q.WorkLaneGet(ctx, EraseLaneKey(scope))
	if errors.Is(err, db.ErrNotFound) {
		return false, nil
	}
	return err == nil && lane.HeadSequence != 0, err
}
