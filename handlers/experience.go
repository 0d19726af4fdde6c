package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
)

const (
	defaultCandidateLimit = 50
	maxCandidateLimit     = 500
)

func candidate(c db.ExperienceCandidate) types.Candidate {
	return types.Candidate{CandidateID: c.CandidateID, ScopeID: c.ScopeID, OperationID: c.WorkID, Title: c.Title,
		Lesson: c.Lesson, CitedPositions: rawJSON(c.CitedPositions, "[]"), Status: c.Status,
		StateVersion: c.StateVersion, CreatedAt: apiTime(c.CreatedAt), UpdatedAt: apiTime(c.UpdatedAt)}
}

// expectedVersion decodes {expected_version: int >= 1}.
func expectedVersion(c echo.Context) (int64, error) {
	var req types.ExpectedVersionRequest
	if err := decodeJSON(c, &req); err != nil {
		return 0, err
	}
	if req.ExpectedVersion == nil {
		return 0, invalidField("expected_version", "is required")
	}
	if *req.ExpectedVersion < 1 {
		return 0, invalidField("expected_version", "must be an integer >= 1")
	}
	return *req.ExpectedVersion, nil
}

func (s *server) listCandidates(c echo.Context) error {
	if s.d.Experience.Store == nil {
		return notReady("experience")
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	status, err := queryString(c, "status")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", defaultCandidateLimit, 1, maxCandidateLimit)
	if err != nil {
		return err
	}
	rows, err := s.d.Experience.List(c.Request().Context(), scope, status, int(limit))
	if err != nil {
		return err
	}
	out := types.CandidateList{Items: make([]types.Candidate, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, candidate(r))
	}
	return c.JSON(http.StatusOK, out)
}

func (s *server) approveCandidate(c echo.Context) error { return s.reviewCandidate(c, true) }
func (s *server) rejectCandidate(c echo.Context) error  { return s.reviewCandidate(c, false) }

func (s *server) reviewCandidate(c echo.Context, approve bool) error {
	if s.d.Experience.Store == nil {
		return notReady("experience")
	}
	version, err := expectedVersion(c)
	if err != nil {
		return err
	}
	id := c.Param("candidate_id")
	if p := principalOf(c); p.Restricted() {
		// Another scope's candidate does not exist for a restricted token. A candidate's scope never changes, so
		// checking it before the review is safe.
		cand, err := s.d.Experience.Get(c.Request().Context(), id) // a malformed id is not found, on every engine
		if errors.Is(err, db.ErrNotFound) || (err == nil && !p.AllowsScope(cand.ScopeID)) {
			return candidateNotFound()
		}
		if err != nil {
			return err
		}
	}
	row, err := s.d.Experience.Review(c.Request().Context(), id, version, approve)
	var conflict *experience.ErrCandidateConflict
	switch {
	case errors.Is(err, db.ErrNotFound):
		return candidateNotFound()
	case errors.As(err, &conflict):
		return apiErr(http.StatusConflict, CodeCandidateConflict, "the candidate is in another state or version",
			map[string]any{"candidate_id": id, "status": conflict.Status, "actual_version": conflict.ActualVersion})
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, candidate(row))
}

// incubateExperience is POST /v1/experience/incubate: the manual trigger of the scope's next incubation window,
// with the memory flush's body, Prefer waits and 200/202/409 answers.
func (s *server) incubateExperience(c echo.Context) error {
	if s.d.Incubator == nil {
		return notReady("experience incubation")
	}
	scope, wait, err := s.triggerRequest(c)
	if err != nil {
		return err
	}
	out, err := s.d.Incubator.Incubate(c.Request().Context(), scope, wait)
	if err != nil {
		return err
	}
	return s.answerTrigger(c, "experience incubation", "incubation", out.Status, out.Item, func(id *string) any {
		return types.IncubateResponse{Status: out.Status, PreviousCursor: out.Result.PreviousCursor,
			CurrentCursor: out.Result.CurrentCursor, HighWatermark: out.Result.HighWatermark,
			ProcessedSourceCount: out.Result.ProcessedSourceCount, CandidateCount: out.Result.CandidateCount, OperationID: id}
	})
}
