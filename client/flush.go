package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Codes of the 409 answers of POST /v1/memory/flush and POST /v1/experience/incubate.
const (
	codeOperationBlocked   = "operation_blocked"
	codeOperationFailed    = "operation_failed"
	codeOperationCancelled = "operation_cancelled"
)

// minPollBudget is the least time one poll request gets, even at the operation deadline.
const minPollBudget = time.Second

// FlushMemory flushes a scope's pending Sources into Memory and waits for the result (see the package comment):
// FlushResult on success, *OperationFailedError when the operation failed, was cancelled or is blocked, and
// *OperationPendingError when it is still not done at the operation deadline.
func (c *Client) FlushMemory(ctx context.Context, scope string) (FlushResult, error) {
	return c.FlushMemoryWith(ctx, scope, nil)
}

// FlushMemoryWith is FlushMemory calling progress (when non-nil) with the operation's record after the 202
// answer (only operation_id, kind, scope_id and status are known then) and after every non-terminal poll.
func (c *Client) FlushMemoryWith(ctx context.Context, scope string, progress func(OperationRecord)) (FlushResult, error) {
	var out FlushResult
	id, err := c.trigger(ctx, "/v1/memory/flush", KindMemoryFlush, scope, progress, &out, func(result json.RawMessage) error {
		var r MemoryFlushResult
		if err := json.Unmarshal(result, &r); err != nil {
			return err
		}
		out = FlushResult{Status: FlushProcessed, PreviousCursor: r.PreviousCursor, CurrentCursor: r.CurrentCursor,
			HighWatermark: r.HighWatermark, ProcessedSourceCount: r.ProcessedSourceCount, Memory: r.Memory}
		return nil
	})
	if id != nil {
		out.OperationID = id
	}
	return out, err
}

// IncubateExperience proposes Experience candidates from the scope's Sources captured since the last incubation,
// now instead of at the next schedule (POST /v1/experience/incubate), and waits for the result like FlushMemory.
// The candidates are pending review (ListExperienceCandidates, ReviewExperienceCandidate).
func (c *Client) IncubateExperience(ctx context.Context, scope string) (IncubateResult, error) {
	return c.IncubateExperienceWith(ctx, scope, nil)
}

// IncubateExperienceWith is IncubateExperience calling progress like FlushMemoryWith.
func (c *Client) IncubateExperienceWith(ctx context.Context, scope string, progress func(OperationRecord)) (IncubateResult, error) {
	var out IncubateResult
	id, err := c.trigger(ctx, "/v1/experience/incubate", KindExperienceIncubation, scope, progress, &out, func(result json.RawMessage) error {
		var r ExperienceIncubationResult
		if err := json.Unmarshal(result, &r); err != nil {
			return err
		}
		out = IncubateResult{Status: FlushProcessed, PreviousCursor: r.PreviousCursor, CurrentCursor: r.CurrentCursor,
			HighWatermark: r.HighWatermark, ProcessedSourceCount: r.ProcessedSourceCount, CandidateCount: r.CandidateCount}
		return nil
	})
	if id != nil {
		out.OperationID = id
	}
	return out, err
}

// trigger is the flush and incubation protocol: POST with Prefer: respond-async; a 200 is decoded into answer;
// a 202 is followed until the operation is terminal, and its result is handed to fromResult. It returns the
// operation id when the answer came from the operation.
func (c *Client) trigger(ctx context.Context, path, kind, scope string, progress func(OperationRecord), answer any,
	fromResult func(json.RawMessage) error) (*string, error) {
	deadline := c.now().Add(c.deadline)
	resp, err := c.send(ctx, http.MethodPost, path, nil, flushBody{ScopeID: scope},
		map[string]string{"Prefer": "respond-async"})
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusConflict {
			if ferr := c.flushConflict(ctx, ae); ferr != nil {
				return nil, ferr
			}
		}
		return nil, err
	}
	switch resp.status {
	case http.StatusOK:
		return nil, decodeBody(http.MethodPost, path, resp, answer)
	case http.StatusAccepted:
	default:
		return nil, fmt.Errorf("powercontext: unexpected answer to POST %s (status %d)", path, resp.status)
	}
	var acc FlushAccepted
	if err := decodeBody(http.MethodPost, path, resp, &acc); err != nil {
		return nil, err
	}
	if acc.OperationID == "" {
		return nil, fmt.Errorf("powercontext: 202 answer to POST %s without an operation_id", path)
	}
	first := OperationRecord{OperationID: acc.OperationID, Kind: kind, ScopeID: scope, Status: acc.Status}
	if progress != nil {
		progress(first)
	}
	rec, err := c.wait(ctx, first, deadline, progress)
	if err != nil {
		return nil, err
	}
	result := rec.Result
	if len(result) == 0 {
		result = json.RawMessage("{}")
	}
	if err := fromResult(result); err != nil {
		return nil, fmt.Errorf("powercontext: unexpected result of operation %s: %w", rec.OperationID, err)
	}
	id := rec.OperationID
	return &id, nil
}

// flushConflict maps the 409 answers of a flush to *OperationFailedError (nil for any other 409).
func (c *Client) flushConflict(ctx context.Context, ae *APIError) error {
	id := ae.DetailString("operation_id")
	switch ae.Code {
	case codeOperationCancelled:
		return &OperationFailedError{OperationID: id, Code: StatusCancelled, Status: StatusCancelled}
	case codeOperationBlocked, codeOperationFailed:
		fe := &OperationFailedError{OperationID: id, Code: ae.Code, Status: StatusFailed, Blocked: ae.Code == codeOperationBlocked}
		// Best effort: name the failed operation's own error code.
		if id != "" {
			if rec, err := c.GetOperation(ctx, id); err == nil && rec.Error != nil && rec.Error.Code != "" {
				fe.Code, fe.Category = rec.Error.Code, rec.Error.Category
			}
		}
		return fe
	}
	return nil
}

// WaitOperation polls an operation until it is terminal or the operation deadline (counted from now) passes. It
// returns the record of a succeeded operation, *OperationFailedError for a failed or cancelled one and
// *OperationPendingError at the deadline. progress, when non-nil, sees every non-terminal record.
func (c *Client) WaitOperation(ctx context.Context, id string, progress func(OperationRecord)) (OperationRecord, error) {
	deadline := c.now().Add(c.deadline)
	rec, err := c.GetOperation(ctx, id)
	if err != nil {
		return OperationRecord{}, err
	}
	if rec.Terminal() {
		return rec, terminalError(rec)
	}
	if progress != nil {
		progress(rec)
	}
	return c.wait(ctx, rec, deadline, progress)
}

// wait polls GET /v1/operations/{id} — every poll a new, independent request — until the record is terminal or
// deadline passes. Transient failures (no answer, 429, 5xx) are retried until the deadline.
func (c *Client) wait(ctx context.Context, last OperationRecord, deadline time.Time, progress func(OperationRecord)) (OperationRecord, error) {
	id := last.OperationID
	status := last.Status
	pause := c.poll
	var lastErr error
	for {
		remaining := deadline.Sub(c.now())
		if remaining <= 0 {
			return OperationRecord{}, &OperationPendingError{OperationID: id, Status: status, Deadline: c.deadline, LastErr: lastErr}
		}
		if err := c.sleep(ctx, min(pause, remaining)); err != nil {
			return OperationRecord{}, fmt.Errorf("powercontext: waiting for operation %s: %w", id, err)
		}
		pause = c.poll
		pollCtx, cancel := context.WithTimeout(ctx, max(deadline.Sub(c.now()), minPollBudget))
		rec, err := c.GetOperation(pollCtx, id)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return OperationRecord{}, fmt.Errorf("powercontext: waiting for operation %s: %w", id, ctx.Err())
			}
			if !transient(err) {
				return OperationRecord{}, err
			}
			lastErr = err
			var ae *APIError
			if errors.As(err, &ae) && ae.RetryAfter > pause {
				pause = ae.RetryAfter
			}
			continue
		}
		lastErr = nil
		if rec.Terminal() {
			return rec, terminalError(rec)
		}
		status = rec.Status
		if progress != nil {
			progress(rec)
		}
	}
}

// terminalError is nil for succeeded and *OperationFailedError for failed or cancelled.
func terminalError(rec OperationRecord) error {
	switch rec.Status {
	case StatusFailed:
		fe := &OperationFailedError{OperationID: rec.OperationID, Code: StatusFailed, Status: StatusFailed}
		if rec.Error != nil {
			if rec.Error.Code != "" {
				fe.Code = rec.Error.Code
			}
			fe.Category = rec.Error.Category
		}
		return fe
	case StatusCancelled:
		return &OperationFailedError{OperationID: rec.OperationID, Code: StatusCancelled, Status: StatusCancelled}
	}
	return nil
}

// transient reports whether a failed poll may succeed on the next request (possibly on another replica).
func transient(err error) bool {
	var ce *ConnectionError
	if errors.As(err, &ce) {
		return true
	}
	var ae *APIError
	return errors.As(err, &ae) && ae.Temporary()
}
