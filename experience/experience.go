// Package experience incubates lessons from task outcomes: the incubation handler reads the next window of
// Sources (at most 32), offers the task-outcome ones to the model provider, and commits pending Experience
// candidates — never approved automatically — in the ledger's final transaction, advancing the
// experience-incubation cursor by compare-and-set. Humans approve or reject candidates with an expected version.
package experience

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// Names of experience incubation.
const (
	Kind        = "powercontext.experience.incubation"
	PublicKind  = "experience_incubation"
	CursorName  = "experience-incubation"
	WindowLimit = 32

	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected"
	// StatusWithdrawn: a Source the candidate cites was forgotten (docs/protocol.md#forgetting-and-erasing).
	StatusWithdrawn = "withdrawn"
)

// WorkKinds are the work kinds this package runs (incubation); app hands them to telemetry, which labels metrics by
// them.
func WorkKinds() []string { return []string{Kind} }

// Consumer returns experience incubation's journal consumer.
func Consumer(maxAttempts int32) sources.Consumer {
	return sources.Consumer{Kind: Kind, CursorName: CursorName, LanePrefix: "experience", Limit: WindowLimit, MaxAttempts: maxAttempts}
}

// Result is the result payload of an incubation.
type Result struct {
	Type                 string `json:"type"`
	PreviousCursor       int64  `json:"previous_cursor"`
	CurrentCursor        int64  `json:"current_cursor"`
	HighWatermark        int64  `json:"high_watermark"`
	ProcessedSourceCount int64  `json:"processed_source_count"`
	CandidateCount       int    `json:"candidate_count"`
}

// Handler is the ledger handler of experience incubation. A nil Provider means the pipeline is not configured:
// items fail with configuration/experience_pipeline_unavailable.
type Handler struct {
	Store    db.Store
	Provider provider.Provider
	// MaxRequestBytes is the byte budget of one provider request (0 = none), as for Memory: the window is narrowed
	// to the prefix whose task outcomes fit (sources.Fit) and the rest becomes the next window.
	MaxRequestBytes int
}

// Kind implements coordinator.Handler: the work kind it runs.
func (h *Handler) Kind() string { return Kind }

// PayloadVersions implements coordinator.Handler: the payload versions it accepts.
func (h *Handler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: sources.PayloadVersion, Max: sources.PayloadVersion}
}

// IsTaskOutcome reports whether a Source's metadata says "kind":"task-outcome".
func IsTaskOutcome(metadata []byte) bool {
	var md struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(metadata, &md) == nil && md.Kind == "task-outcome"
}

// Prepare implements coordinator.Handler: the work done outside any transaction.
func (h *Handler) Prepare(ctx context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	p, cur, state, err := sources.OpenWindow(ctx, h.Store, item, CursorName)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	if state == sources.WindowAlreadyCommitted {
		return coordinator.Prepared{Result: coordinator.Result{Code: "already_committed", Payload: Result{Type: PublicKind,
			PreviousCursor: p.After, CurrentCursor: cur.Position, HighWatermark: p.HighWatermark}}}, nil
	}
	window, err := sources.ReadWindow(ctx, h.Store, item.ScopeID, p)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	if h.MaxRequestBytes > 0 {
		// Only task outcomes are sent: the budget narrows the window after the last outcome that fits.
		window, p = fitOutcomes(window, p, h.MaxRequestBytes)
	}
	var outcomes []provider.Source
	inWindow := map[int64]bool{}
	for _, s := range window {
		if !s.ErasedAt.IsZero() || !IsTaskOutcome(s.Metadata) { // a tombstone (forgotten Source) offers nothing
			continue
		}
		var md map[string]any
		_ = json.Unmarshal(s.Metadata, &md)
		outcomes = append(outcomes, provider.Source{Position: s.JournalPosition, Type: s.SourceType, Content: s.Content, Metadata: md})
		inWindow[s.JournalPosition] = true
	}
	var lessons []provider.Lesson
	if len(outcomes) > 0 {
		if h.Provider == nil {
			return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryConfiguration, coordinator.CodeExperienceOff, false)
		}
		resp, err := h.Provider.IncubateExperience(ctx, provider.IncubateRequest{ScopeID: item.ScopeID, Window: outcomes})
		if err != nil {
			return coordinator.Prepared{}, err
		}
		for _, l := range resp.Candidates {
			if l.Title == "" || l.Lesson == "" || len(l.CitedPositions) == 0 {
				return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeInvalidOutput, true)
			}
			for _, pos := range l.CitedPositions {
				if !inWindow[pos] { // every cited Source must lie inside the window
					return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeInvalidOutput, true)
				}
			}
		}
		lessons = resp.Candidates
	}
	result := Result{Type: PublicKind, PreviousCursor: p.After, CurrentCursor: p.Through, HighWatermark: p.HighWatermark,
		ProcessedSourceCount: p.Through - p.After, CandidateCount: len(lessons)}
	commit := func(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time) error {
		if err := sources.Advance(ctx, q, item.ScopeID, p, now); err != nil {
			return err
		}
		// A Source forgotten since Prepare read it withdraws the lessons citing it: a forget locks this cursor
		// (held now) around its erase, so the erase is either visible here or waits and withdraws what we insert.
		forgotten, err := forgottenIn(ctx, q, item.ScopeID, p)
		if err != nil {
			return err
		}
		for _, l := range lessons {
			if citesAny(l.CitedPositions, forgotten) {
				continue
			}
			cited, _ := json.Marshal(l.CitedPositions)
			if err := q.ExperienceCandidateInsert(ctx, db.ExperienceCandidate{CandidateID: uuid.NewString(), ScopeID: item.ScopeID,
				WorkID: item.WorkID, Title: truncate(l.Title, 512), Lesson: l.Lesson, CitedPositions: cited, Status: StatusPending,
				StateVersion: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	}
	return coordinator.Prepared{Result: coordinator.Result{Code: "processed", Payload: result}, Commit: commit}, nil
}

// fitOutcomes narrows the window to the longest prefix whose live task outcomes fit budget (sources.Fit over the
// outcomes; the Sources between them cost nothing, they are not sent). A single outcome over the budget is cut for
// the provider.
func fitOutcomes(window []db.Source, p sources.WindowPayload, budget int) ([]db.Source, sources.WindowPayload) {
	var outcomes []db.Source
	for _, s := range window {
		if s.ErasedAt.IsZero() && IsTaskOutcome(s.Metadata) {
			outcomes = append(outcomes, s)
		}
	}
	fit, _, _ := sources.Fit(outcomes, p, budget)
	// Stop just before the first outcome that did not fit (if any); replace the kept outcomes by their (maybe cut)
	// copies.
	stop := p.Through + 1
	if len(fit) < len(outcomes) {
		stop = outcomes[len(fit)].JournalPosition
	}
	cut := map[int64]db.Source{}
	for _, s := range fit {
		cut[s.JournalPosition] = s
	}
	var out []db.Source
	for _, s := range window {
		if s.JournalPosition >= stop {
			break
		}
		if c, ok := cut[s.JournalPosition]; ok {
			s = c
		}
		out = append(out, s)
	}
	p.Through = stop - 1
	return out, p
}

// forgottenIn returns the positions of the window's Sources that are tombstones now.
func forgottenIn(ctx context.Context, q db.Queries, scope string, p sources.WindowPayload) (map[int64]bool, error) {
	srcs, err := q.SourceListRange(ctx, db.SourceListRangeParams{ScopeID: scope, AfterPosition: p.After, ThroughPosition: p.Through})
	if err != nil {
		return nil, err
	}
	out := map[int64]bool{}
	for _, s := range srcs {
		if !s.ErasedAt.IsZero() {
			out[s.JournalPosition] = true
		}
	}
	return out, nil
}

func citesAny(cited []int64, positions map[int64]bool) bool {
	for _, c := range cited {
		if positions[c] {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}

// ErrCandidateConflict carries the candidate's actual state when a review used a stale version or the candidate
// was already reviewed.
type ErrCandidateConflict struct {
	Status        string
	ActualVersion int64
}

func (e *ErrCandidateConflict) Error() string { return "experience: candidate state conflict" }

// Reviews lists and reviews candidates.
type Reviews struct {
	Store db.Store
	// OnApproved, when set, runs after a candidate was approved (app enqueues its skill packaging there). The
	// approval has committed by then; what OnApproved does cannot undo it, so it reports its own failures.
	OnApproved func(ctx context.Context, c db.ExperienceCandidate)
}

// List returns a scope's candidates, newest first; status "" means any.
func (r Reviews) List(ctx context.Context, scope, status string, limit int) ([]db.ExperienceCandidate, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return nil, err
	}
	switch status {
	case "", StatusPending, StatusApproved, StatusRejected, StatusWithdrawn:
	default:
		return nil, &sources.ValidationError{Field: "status", Message: "must be pending, approved, rejected or withdrawn"}
	}
	if limit < 1 || limit > 500 {
		return nil, &sources.ValidationError{Field: "limit", Message: "must be 1..500"}
	}
	return r.Store.ExperienceCandidateList(ctx, db.ExperienceCandidateListParams{ScopeID: scope, Status: status, Limit: int32(limit)})
}

// Get returns one candidate; an id that is not a canonical UUID is db.ErrNotFound (never sent to the database, where
// a uuid column would refuse it with an error).
func (r Reviews) Get(ctx context.Context, candidateID string) (db.ExperienceCandidate, error) {
	if _, err := uuid.Parse(candidateID); err != nil || len(candidateID) != 36 {
		return db.ExperienceCandidate{}, db.ErrNotFound
	}
	return r.Store.ExperienceCandidateGet(ctx, candidateID)
}

// Review approves or rejects a pending candidate with an expected version.
func (r Reviews) Review(ctx context.Context, candidateID string, expectedVersion int64, approve bool) (db.ExperienceCandidate, error) {
	if _, err := uuid.Parse(candidateID); err != nil || len(candidateID) != 36 {
		return db.ExperienceCandidate{}, db.ErrNotFound
	}
	status := StatusRejected
	if approve {
		status = StatusApproved
	}
	now, err := r.Store.DBNow(ctx)
	if err != nil {
		return db.ExperienceCandidate{}, err
	}
	n, err := r.Store.ExperienceCandidateUpdateStatus(ctx, db.ExperienceCandidateUpdateStatusParams{CandidateID: candidateID, ExpectedVersion: expectedVersion, Status: status, UpdatedAt: now})
	if err != nil {
		return db.ExperienceCandidate{}, err
	}
	c, err := r.Store.ExperienceCandidateGet(ctx, candidateID)
	if err != nil {
		return db.ExperienceCandidate{}, err
	}
	if n != 1 {
		return c, &ErrCandidateConflict{Status: c.Status, ActualVersion: c.StateVersion}
	}
	if approve && r.OnApproved != nil {
		r.OnApproved(ctx, c)
	}
	return c, nil
}
