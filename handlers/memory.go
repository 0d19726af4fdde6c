package handlers

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/memory"
)

func eviction(ids []int64) *types.Eviction {
	if ids == nil {
		return nil
	}
	return &types.Eviction{Count: len(ids), EntryIDs: ids}
}

// methodScores is nil when no method matched (a context item that did not match the query).
func methodScores(m memory.MethodScores) *types.MethodScores {
	if m.FTS == nil && m.Semantic == nil {
		return nil
	}
	return &types.MethodScores{FTS: m.FTS, Semantic: m.Semantic}
}

// queryMode reads the optional mode parameter of search and context.
func queryMode(c echo.Context) (string, error) {
	mode, err := queryString(c, "mode")
	if err != nil {
		return "", err
	}
	if !memory.ValidMode(mode) {
		return "", invalidField("mode", "must be fts, semantic or hybrid")
	}
	return mode, nil
}

const (
	defaultSearchLimit = 20
	maxSearchLimit     = 100
)

func operationURL(id string) string { return "/v1/operations/" + id }

func (s *server) flushMemory(c echo.Context) error {
	if s.d.Flusher == nil {
		return notReady("memory flush")
	}
	scope, wait, err := s.triggerRequest(c)
	if err != nil {
		return err
	}
	out, err := s.d.Flusher.Flush(c.Request().Context(), scope, wait)
	if err != nil {
		return err
	}
	return s.answerTrigger(c, "memory flush", "memory", out.Status, out.Item, func(id *string) any {
		resp := types.FlushResponse{Status: out.Status, PreviousCursor: out.Result.PreviousCursor,
			CurrentCursor: out.Result.CurrentCursor, HighWatermark: out.Result.HighWatermark,
			ProcessedSourceCount: out.Result.ProcessedSourceCount, OperationID: id}
		if out.Result.Memory != nil {
			resp.Memory = &types.MemoryRevision{Revision: out.Result.Memory.Revision}
		}
		return resp
	})
}

// triggerRequest reads the body ({"scope_id"}) and the Prefer wait of a flush or an incubation.
func (s *server) triggerRequest(c echo.Context) (scope string, wait time.Duration, err error) {
	var req types.FlushRequest
	if err := decodeJSON(c, &req); err != nil {
		return "", 0, err
	}
	if err := checkText("scope_id", req.ScopeID); err != nil {
		return "", 0, err
	}
	return req.ScopeID, flushWait(c.Request().Header.Values("Prefer"), s.defaultWait, s.maxWait), nil
}

// answerTrigger writes the answer to a coordinator.Ledger.Trigger outcome: 200 with ok(operation id, nil when
// idle) for idle and processed, 202 with Location and Retry-After while pending, 409 when blocked, failed or
// cancelled. what names the operation ("memory flush") and window the consumer ("memory") in the messages.
func (s *server) answerTrigger(c echo.Context, what, window, status string, item db.WorkItem, ok func(id *string) any) error {
	id := item.WorkID
	switch status {
	case coordinator.TriggerIdle, coordinator.TriggerProcessed:
		var ref *string
		if id != "" {
			ref = &id
		}
		return c.JSON(http.StatusOK, ok(ref))
	case coordinator.TriggerPending:
		h := c.Response().Header()
		h.Set(echo.HeaderLocation, operationURL(id))
		h.Set(echo.HeaderRetryAfter, strconv.Itoa(RetryAfterSeconds))
		return c.JSON(http.StatusAccepted, types.FlushAccepted{OperationID: id, Status: item.Status, StatusURL: operationURL(id)})
	case coordinator.TriggerBlocked:
		return apiErr(http.StatusConflict, CodeOperationBlocked,
			"the scope's next "+window+" window is held by a failed operation; retry or cancel it",
			map[string]any{"operation_id": id})
	case coordinator.TriggerFailed:
		return apiErr(http.StatusConflict, CodeOperationFailed, "the "+what+" operation failed",
			map[string]any{"operation_id": id})
	case coordinator.TriggerCancelled:
		return apiErr(http.StatusConflict, CodeOperationCancelled, "the "+what+" operation was cancelled",
			map[string]any{"operation_id": id})
	}
	return errUnknownOutcome
}

var errUnknownOutcome = errors.New("handlers: unknown flush outcome")

// flushWait reads RFC 7240 preferences: respond-async means wait 0 and wins; wait=N (seconds) is clamped to
// 0..max; anything unrecognised is ignored (default wait).
func flushWait(prefer []string, def, max time.Duration) time.Duration {
	wait, async := def, false
	for _, header := range prefer {
		for _, pref := range strings.Split(header, ",") {
			token, _, _ := strings.Cut(pref, ";") // preference parameters are not used
			name, value, hasValue := strings.Cut(strings.TrimSpace(token), "=")
			name = strings.ToLower(strings.TrimSpace(name))
			switch {
			case name == "respond-async" && !hasValue:
				async = true
			case name == "wait" && hasValue:
				v := strings.Trim(strings.TrimSpace(value), `"`)
				secs, err := strconv.ParseFloat(v, 64)
				if err != nil || secs != secs { // NaN
					continue
				}
				switch {
				case secs <= 0:
					wait = 0
				case secs >= max.Seconds():
					wait = max
				default:
					wait = time.Duration(secs * float64(time.Second))
				}
			}
		}
	}
	if async {
		return 0
	}
	return wait
}

// entryID is an entry's id for an answer: nil (null) when it has none.
func entryID(e db.MemoryEntry) *int64 {
	if e.EntryID == 0 {
		return nil
	}
	id := e.EntryID
	return &id
}

func memoryResponse(m memory.Memory) types.MemoryResponse {
	out := types.MemoryResponse{ScopeID: m.ScopeID, Entries: make([]types.MemoryEntry, 0, len(m.Entries)), Evicted: eviction(m.Evicted)}
	if m.Revision > 0 {
		rev := m.Revision
		out.Revision = &rev
		out.CreatedAt = optTime(m.CreatedAt)
	}
	for i, e := range m.Entries {
		entry := types.MemoryEntry{EntryNo: e.EntryNo, EntryID: entryID(e), Content: e.Content, SourcePositions: rawJSON(e.SourcePositions, "[]")}
		if i < len(m.Scores) {
			score := m.Scores[i]
			entry.Score = &score
		}
		if i < len(m.Methods) {
			entry.Scores = methodScores(m.Methods[i])
		}
		out.Entries = append(out.Entries, entry)
	}
	return out
}

func (s *server) getMemory(c echo.Context) error {
	if s.d.Memory.Store == nil {
		return notReady("memory")
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	rev, err := queryInt(c, "revision", 0, 1, math.MaxInt64)
	if err != nil {
		return err
	}
	var m memory.Memory
	if rev > 0 {
		m, err = s.d.Memory.At(c.Request().Context(), scope, rev)
	} else {
		m, err = s.d.Memory.Current(c.Request().Context(), scope)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, memoryResponse(m))
}

func (s *server) searchMemory(c echo.Context) error {
	if s.d.Memory.Store == nil {
		return notReady("memory")
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	q, err := queryString(c, "q")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", defaultSearchLimit, 1, maxSearchLimit)
	if err != nil {
		return err
	}
	mode, err := queryMode(c)
	if err != nil {
		return err
	}
	m, err := s.d.Memory.SearchMode(c.Request().Context(), scope, q, int(limit), mode)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, types.MemorySearchResponse{MemoryResponse: memoryResponse(m), Mode: m.Mode, Degraded: m.Degraded})
}

const (
	defaultRevisionLimit = 50
	maxRevisionLimit     = memory.MaxHistoryLimit
)

func (s *server) listMemoryRevisions(c echo.Context) error {
	if s.d.Memory.Store == nil {
		return notReady("memory")
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	cursor, err := queryString(c, "cursor")
	if err != nil {
		return invalidField("cursor", "is malformed")
	}
	var before int64
	if cursor != "" {
		if before, err = strconv.ParseInt(cursor, 10, 64); err != nil || before < 1 {
			return invalidField("cursor", "is malformed")
		}
	}
	limit, err := queryInt(c, "limit", defaultRevisionLimit, 1, maxRevisionLimit)
	if err != nil {
		return err
	}
	// One more than the limit tells whether a next page exists.
	revs, err := s.d.Memory.Revisions(c.Request().Context(), scope, before, int(limit)+1)
	if err != nil {
		return err
	}
	pg := s.newPage()
	var out types.MemoryRevisionList
	for i, r := range revs {
		kept := true
		if i < int(limit) {
			if kept, err = pg.add(types.MemoryRevisionRecord{Revision: r.Revision, CreatedAt: types.Time(r.CreatedAt),
				EntryCount: r.EntryCount, WindowAfter: r.WindowAfter, WindowThrough: r.WindowThrough,
				OperationID: r.WorkID, Evicted: eviction(memory.EvictedIDs(r))}); err != nil {
				return err
			}
		}
		if i == int(limit) || !kept {
			next := strconv.FormatInt(revs[i-1].Revision, 10)
			out.NextCursor = &next
			break
		}
	}
	out.Items = pg.list()
	return c.JSON(http.StatusOK, out)
}

func diffEntries(es []db.MemoryEntry) []types.MemoryEntry {
	out := make([]types.MemoryEntry, 0, len(es))
	for _, e := range es {
		out = append(out, types.MemoryEntry{EntryNo: e.EntryNo, EntryID: entryID(e), Content: e.Content, SourcePositions: rawJSON(e.SourcePositions, "[]")})
	}
	return out
}

func (s *server) diffMemory(c echo.Context) error {
	if s.d.Memory.Store == nil {
		return notReady("memory")
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	to, err := queryInt(c, "to", 0, 1, math.MaxInt64)
	if err != nil {
		return err
	}
	if to == 0 { // default: the current revision
		m, err := s.d.Memory.Current(c.Request().Context(), scope)
		if err != nil {
			return err
		}
		if m.Revision == 0 {
			return apiErr(http.StatusNotFound, CodeRevisionNotFound, "the scope has no memory revision yet", nil)
		}
		to = m.Revision
	}
	from, err := queryInt(c, "from", to-1, 0, math.MaxInt64)
	if err != nil {
		return err
	}
	d, err := s.d.Memory.Diff(c.Request().Context(), scope, from, to)
	if err != nil {
		return err
	}
	out := types.MemoryDiff{ScopeID: scope, From: from, To: to, Added: diffEntries(d.Added), Removed: diffEntries(d.Removed),
		Changed: make([]types.MemoryDiffEntry, 0, len(d.Changed))}
	for _, ch := range d.Changed {
		pair := diffEntries([]db.MemoryEntry{ch.From, ch.To})
		out.Changed = append(out.Changed, types.MemoryDiffEntry{From: pair[0], To: pair[1]})
	}
	return c.JSON(http.StatusOK, out)
}

func (s *server) getContext(c echo.Context) error {
	if s.d.Memory.Store == nil || s.d.Experience.Store == nil {
		return notReady("context assembly")
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	q, err := queryString(c, "q")
	if err != nil {
		return err
	}
	maxTokens, err := queryInt(c, "max_tokens", memory.DefaultContextTokens, 1, memory.MaxContextTokens)
	if err != nil {
		return err
	}
	mode, err := queryMode(c)
	if err != nil {
		return err
	}
	a := memory.Assembler{Memory: s.d.Memory, Lessons: s.d.Experience}
	got, err := a.AssembleMode(c.Request().Context(), scope, q, int(maxTokens), mode)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, contextResponse(got))
}

func contextResponse(got memory.Assembled) types.ContextResponse {
	out := types.ContextResponse{ScopeID: got.ScopeID, MaxTokens: got.MaxTokens, UsedTokens: got.UsedTokens,
		Omitted: got.Omitted, Items: make([]types.ContextItem, 0, len(got.Items)), Mode: got.Mode, Degraded: got.Degraded}
	if got.Revision > 0 {
		rev := got.Revision
		out.Revision = &rev
	}
	for _, it := range got.Items {
		item := types.ContextItem{Type: it.Kind, Content: it.Content, SourcePositions: rawJSON(it.SourcePositions, "[]"),
			Score: it.Score, Tokens: it.Tokens}
		if it.Kind == memory.ItemMemory {
			n := it.EntryNo
			item.EntryNo = &n
			item.EntryID = entryID(db.MemoryEntry{EntryID: it.EntryID})
			item.Scores = methodScores(it.Methods)
		} else {
			id, title := it.CandidateID, it.Title
			item.CandidateID, item.Title = &id, &title
		}
		out.Items = append(out.Items, item)
	}
	return out
}
