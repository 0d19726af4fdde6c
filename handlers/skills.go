package handlers

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/skills"
)

// agentPrefix is where coding agents talk to the server with their own skill credential (docs/skills.md), not a
// principal's token: the auth middleware leaves these paths to their handlers.
const agentPrefix = "/v1/skill-agent/"

// addSkills registers the Skills routes (docs/skills.md).
func (s *server) addSkills(e *echo.Echo) {
	s.add(e, http.MethodGet, "/v1/skills", s.listSkills)
	s.add(e, http.MethodGet, "/v1/skills/:skill_name/revisions", s.listSkillRevisions)
	s.add(e, http.MethodPost, "/v1/skill-targets", s.registerSkillTarget)
	s.add(e, http.MethodGet, "/v1/skill-targets", s.listSkillTargets)
	s.add(e, http.MethodPost, "/v1/skill-targets/:target_id/revoke", s.revokeSkillTarget)
	s.add(e, http.MethodGet, "/v1/skill-targets/:target_id/publications", s.listSkillPublications)
	s.add(e, http.MethodPut, "/v1/skill-targets/:target_id/publications/:skill_name", s.putSkillPublication)
	s.add(e, http.MethodPost, agentPrefix+"enroll", s.enrollSkillAgent)
	s.add(e, http.MethodGet, agentPrefix+"desired", s.skillAgentDesired)
	s.add(e, http.MethodGet, agentPrefix+"skills/:skill_name/revisions/:revision/archive", s.skillAgentArchive)
	s.add(e, http.MethodPost, agentPrefix+"skills/:skill_name/report", s.skillAgentReport)
}

func skillTarget(t db.SkillTarget) types.SkillTarget {
	return types.SkillTarget{TargetID: t.TargetID, ScopeID: t.ScopeID, AgentKind: t.AgentKind, DisplayName: t.DisplayName,
		Enrolled: t.CredentialDigest != "", EnrollmentExpiresAt: optTime(t.EnrollmentExpiresAt), RevokedAt: optTime(t.RevokedAt),
		Generation: t.Generation, CreatedAt: apiTime(t.CreatedAt), UpdatedAt: apiTime(t.UpdatedAt)}
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func skillPublication(p db.SkillPublication) types.SkillPublication {
	out := types.SkillPublication{TargetID: p.TargetID, SkillName: p.SkillName, ScopeID: p.ScopeID, DesiredState: p.DesiredState,
		DesiredRevision: p.DesiredRevision, ObservedTreeDigest: optString(p.ObservedTreeDigest), ErrorCode: optString(p.ErrorCode),
		State: p.State, Generation: p.Generation, CreatedAt: apiTime(p.CreatedAt), UpdatedAt: apiTime(p.UpdatedAt)}
	if p.ObservedRevision > 0 {
		v := p.ObservedRevision
		out.ObservedRevision = &v
	}
	return out
}

// skillsErr maps the Skills errors of an operator's request.
func skillsErr(err error) error {
	switch {
	case errors.Is(err, skills.ErrRevoked):
		return apiErr(http.StatusConflict, CodeSkillConflict, "the target is revoked", nil)
	case errors.Is(err, skills.ErrConflict):
		return apiErr(http.StatusConflict, CodeSkillConflict, "the publication changed concurrently; retry", nil)
	}
	return err
}

func (s *server) skillsReady() error {
	if s.d.Skills == nil {
		return notReady("skills")
	}
	return nil
}

func (s *server) listSkills(c echo.Context) error {
	if err := s.skillsReady(); err != nil {
		return err
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", 100, 1, 500)
	if err != nil {
		return err
	}
	rows, err := s.d.Skills.Skills(c.Request().Context(), scope, int(limit))
	if err != nil {
		return err
	}
	out := types.Items[types.Skill]{Items: make([]types.Skill, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, types.Skill{ScopeID: r.ScopeID, Name: r.SkillName, CurrentRevision: r.CurrentRevision,
			CreatedAt: apiTime(r.CreatedAt), UpdatedAt: apiTime(r.UpdatedAt)})
	}
	return c.JSON(http.StatusOK, out)
}

func (s *server) listSkillRevisions(c echo.Context) error {
	if err := s.skillsReady(); err != nil {
		return err
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", 20, 1, 100)
	if err != nil {
		return err
	}
	rows, err := s.d.Skills.Revisions(c.Request().Context(), scope, c.Param("skill_name"), int(limit))
	if err != nil {
		return err
	}
	out := types.Items[types.SkillRevision]{Items: make([]types.SkillRevision, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, types.SkillRevision{Revision: r.Revision, TreeDigest: r.TreeDigest, ArchiveDigest: r.ArchiveDigest,
			FileCount: r.FileCount, ByteSize: r.ByteSize, SourceCandidateIDs: rawJSON(r.SourceCandidateIDs, "[]"), CreatedAt: apiTime(r.CreatedAt)})
	}
	return c.JSON(http.StatusOK, out)
}

func (s *server) registerSkillTarget(c echo.Context) error {
	if err := s.skillsReady(); err != nil {
		return err
	}
	var req types.RegisterSkillTargetRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if err := scopeAllowed(principalOf(c), req.ScopeID); err != nil {
		return err
	}
	t, tok, err := s.d.Skills.RegisterTarget(c.Request().Context(), req.ScopeID, req.AgentKind, req.DisplayName)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, types.RegisterSkillTargetResponse{Target: skillTarget(t), EnrollmentToken: tok})
}

func (s *server) listSkillTargets(c echo.Context) error {
	if err := s.skillsReady(); err != nil {
		return err
	}
	scope, err := queryString(c, "scope_id")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", 100, 1, 500)
	if err != nil {
		return err
	}
	rows, err := s.d.Skills.Targets(c.Request().Context(), scope, int(limit))
	if err != nil {
		return err
	}
	out := types.Items[types.SkillTarget]{Items: make([]types.SkillTarget, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, skillTarget(r))
	}
	return c.JSON(http.StatusOK, out)
}

// target is the path's target if the principal may use its scope; another scope's target does not exist for it.
func (s *server) target(c echo.Context) (db.SkillTarget, error) {
	t, err := s.d.Skills.Target(c.Request().Context(), c.Param("target_id"))
	if errors.Is(err, db.ErrNotFound) || err == nil && !principalOf(c).AllowsScope(t.ScopeID) {
		return db.SkillTarget{}, apiErr(http.StatusNotFound, CodeNotFound, "no such skill target", nil)
	}
	return t, err
}

func (s *server) revokeSkillTarget(c echo.Context) error {
	if err := s.skillsReady(); err != nil {
		return err
	}
	t, err := s.target(c)
	if err != nil {
		return err
	}
	t, err = s.d.Skills.Revoke(c.Request().Context(), t.TargetID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, skillTarget(t))
}

func (s *server) listSkillPublications(c echo.Context) error {
	if err := s.skillsReady(); err != nil {
		return err
	}
	t, err := s.target(c)
	if err != nil {
		return err
	}
	rows, err := s.d.Skills.Publications(c.Request().Context(), t.TargetID)
	if err != nil {
		return err
	}
	out := types.Items[types.SkillPublication]{Items: make([]types.SkillPublication, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, skillPublication(r))
	}
	return c.JSON(http.StatusOK, out)
}

func (s *server) putSkillPublication(c echo.Context) error {
	if err := s.skillsReady(); err != nil {
		return err
	}
	var req types.PutSkillPublicationRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.DesiredState != skills.DesiredPublished && req.DesiredState != skills.DesiredUnpublished {
		return invalidField("desired_state", "must be published or unpublished")
	}
	var rev int64
	if req.Revision != nil {
		if *req.Revision < 1 {
			return invalidField("revision", "must be an integer >= 1")
		}
		rev = *req.Revision
	}
	t, err := s.target(c)
	if err != nil {
		return err
	}
	p, err := s.d.Skills.Publish(c.Request().Context(), t.TargetID, c.Param("skill_name"), rev, req.DesiredState == skills.DesiredUnpublished)
	if err != nil {
		return skillsErr(err)
	}
	return c.JSON(http.StatusOK, skillPublication(p))
}

// agent authenticates the request's skill credential: 401 unauthorized when missing or unknown (spending the
// address's budget of unauthenticated requests), 403 forbidden when the target was revoked.
func (s *server) agent(c echo.Context) (db.SkillTarget, error) {
	if err := s.skillsReady(); err != nil {
		return db.SkillTarget{}, err
	}
	cred, _ := bearer(c.Request().Header.Get(echo.HeaderAuthorization))
	t, err := s.d.Skills.Authenticate(c.Request().Context(), cred)
	switch {
	case errors.Is(err, skills.ErrUnauthenticated):
		if err := s.spendUnauthenticated(c); err != nil {
			return db.SkillTarget{}, err
		}
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="powercontext-skills"`)
		return db.SkillTarget{}, apiErr(http.StatusUnauthorized, CodeUnauthorized, "missing or invalid skill credential", nil)
	case errors.Is(err, skills.ErrRevoked):
		return db.SkillTarget{}, apiErr(http.StatusForbidden, CodeForbidden, "this skill target was revoked", nil)
	}
	return t, err
}

func (s *server) enrollSkillAgent(c echo.Context) error {
	if err := s.skillsReady(); err != nil {
		return err
	}
	var req types.EnrollSkillAgentRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	t, cred, err := s.d.Skills.Enroll(c.Request().Context(), req.EnrollmentToken)
	if errors.Is(err, skills.ErrUnauthenticated) {
		if err := s.spendUnauthenticated(c); err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="powercontext-skills"`)
		return apiErr(http.StatusUnauthorized, CodeUnauthorized, "unknown, spent or expired enrollment token", nil)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, types.EnrollSkillAgentResponse{TargetID: t.TargetID, ScopeID: t.ScopeID, Credential: cred})
}

func (s *server) skillAgentDesired(c echo.Context) error {
	t, err := s.agent(c)
	if err != nil {
		return err
	}
	rows, err := s.d.Skills.Desired(c.Request().Context(), t)
	if err != nil {
		return err
	}
	out := types.DesiredState{TargetID: t.TargetID, Items: make([]types.DesiredSkill, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, types.DesiredSkill{SkillName: r.Name, DesiredState: r.DesiredState, Revision: r.Revision,
			TreeDigest: optString(r.TreeDigest), ArchiveDigest: optString(r.ArchiveDigest), State: r.State, Generation: r.Generation})
	}
	return c.JSON(http.StatusOK, out)
}

func (s *server) skillAgentArchive(c echo.Context) error {
	t, err := s.agent(c)
	if err != nil {
		return err
	}
	rev, err := strconv.ParseInt(c.Param("revision"), 10, 64)
	if err != nil || rev < 1 {
		return apiErr(http.StatusNotFound, CodeNotFound, "no such revision for this target", nil)
	}
	r, err := s.d.Skills.Archive(c.Request().Context(), t, c.Param("skill_name"), rev)
	if errors.Is(err, db.ErrNotFound) {
		return apiErr(http.StatusNotFound, CodeNotFound, "no such revision for this target", nil)
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("X-Archive-Digest", r.ArchiveDigest)
	c.Response().Header().Set("X-Tree-Digest", r.TreeDigest)
	return c.Blob(http.StatusOK, "application/x-tar", r.Archive)
}

func (s *server) skillAgentReport(c echo.Context) error {
	t, err := s.agent(c)
	if err != nil {
		return err
	}
	var req types.SkillReportRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	var r skills.Report
	if req.ObservedRevision != nil {
		r.ObservedRevision = *req.ObservedRevision
	}
	if req.ObservedTreeDigest != nil {
		r.ObservedTreeDigest = *req.ObservedTreeDigest
	}
	if req.ErrorCode != nil {
		r.ErrorCode = *req.ErrorCode
	}
	p, err := s.d.Skills.Report(c.Request().Context(), t, c.Param("skill_name"), r)
	if err != nil {
		return skillsErr(err)
	}
	return c.JSON(http.StatusOK, skillPublication(p))
}
