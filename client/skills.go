package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/powercontext/powercontext/api/skillpkg"
)

// Skill is one skill of a scope (docs/skills.md).
type Skill struct {
	ScopeID         string    `json:"scope_id"`
	Name            string    `json:"name"`
	CurrentRevision int64     `json:"current_revision"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// SkillRevision is one revision of a skill.
type SkillRevision struct {
	Revision           int64     `json:"revision"`
	TreeDigest         string    `json:"tree_digest"`
	ArchiveDigest      string    `json:"archive_digest"`
	FileCount          int       `json:"file_count"`
	ByteSize           int64     `json:"byte_size"`
	SourceCandidateIDs []string  `json:"source_candidate_ids"`
	CreatedAt          time.Time `json:"created_at"`
}

// SkillTarget is one agent installation.
type SkillTarget struct {
	TargetID            string     `json:"target_id"`
	ScopeID             string     `json:"scope_id"`
	AgentKind           string     `json:"agent_kind"`
	DisplayName         string     `json:"display_name"`
	Enrolled            bool       `json:"enrolled"`
	EnrollmentExpiresAt *time.Time `json:"enrollment_expires_at"`
	RevokedAt           *time.Time `json:"revoked_at"`
	Generation          int64      `json:"generation"`
	CreatedAt           time.Time  `json:"created_at"`
	UpdatedAt           time.Time  `json:"updated_at"`
}

// RegisteredSkillTarget is a new target with its one-time enrollment token.
type RegisteredSkillTarget struct {
	Target          SkillTarget `json:"target"`
	EnrollmentToken string      `json:"enrollment_token"`
}

// SkillPublication is the desired and observed state of one skill on one target.
type SkillPublication struct {
	TargetID           string    `json:"target_id"`
	SkillName          string    `json:"skill_name"`
	ScopeID            string    `json:"scope_id"`
	DesiredState       string    `json:"desired_state"`
	DesiredRevision    int64     `json:"desired_revision"`
	ObservedRevision   *int64    `json:"observed_revision"`
	ObservedTreeDigest *string   `json:"observed_tree_digest"`
	ErrorCode          *string   `json:"error_code"`
	State              string    `json:"state"`
	Generation         int64     `json:"generation"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

// SkillEnrollment is an agent's credential, returned once by EnrollSkillAgent.
type SkillEnrollment struct {
	TargetID   string `json:"target_id"`
	ScopeID    string `json:"scope_id"`
	Credential string `json:"credential"`
}

// DesiredSkill is one entry of an agent's desired state.
type DesiredSkill struct {
	SkillName     string  `json:"skill_name"`
	DesiredState  string  `json:"desired_state"` // published | unpublished
	Revision      int64   `json:"revision"`
	TreeDigest    *string `json:"tree_digest"`
	ArchiveDigest *string `json:"archive_digest"`
	State         string  `json:"state"`
	Generation    int64   `json:"generation"`
}

// SkillDesiredState is an agent's desired state.
type SkillDesiredState struct {
	TargetID string         `json:"target_id"`
	Items    []DesiredSkill `json:"items"`
}

// SkillReport is what an agent reports for one skill: a revision and its folder's tree digest (zero and "" when it
// holds none), or an error code (conflict, incompatible or another delivery failure).
type SkillReport struct {
	ObservedRevision   int64
	ObservedTreeDigest string
	ErrorCode          string
}

// ListSkills lists a scope's skills.
func (c *Client) ListSkills(ctx context.Context, scope string) ([]Skill, error) {
	var out struct {
		Items []Skill `json:"items"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/skills", url.Values{"scope_id": {scope}}, nil, &out)
	return out.Items, err
}

// ListSkillRevisions lists a skill's revisions, newest first.
func (c *Client) ListSkillRevisions(ctx context.Context, scope, name string) ([]SkillRevision, error) {
	var out struct {
		Items []SkillRevision `json:"items"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/skills/"+url.PathEscape(name)+"/revisions", url.Values{"scope_id": {scope}}, nil, &out)
	return out.Items, err
}

// RegisterSkillTarget registers an agent installation (admin).
func (c *Client) RegisterSkillTarget(ctx context.Context, scope, agentKind, displayName string) (RegisteredSkillTarget, error) {
	var out RegisteredSkillTarget
	err := c.call(ctx, http.MethodPost, "/v1/skill-targets", nil,
		map[string]string{"scope_id": scope, "agent_kind": agentKind, "display_name": displayName}, &out)
	return out, err
}

// ListSkillTargets lists a scope's targets (admin).
func (c *Client) ListSkillTargets(ctx context.Context, scope string) ([]SkillTarget, error) {
	var out struct {
		Items []SkillTarget `json:"items"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/skill-targets", url.Values{"scope_id": {scope}}, nil, &out)
	return out.Items, err
}

// RevokeSkillTarget revokes a target (admin).
func (c *Client) RevokeSkillTarget(ctx context.Context, targetID string) (SkillTarget, error) {
	var out SkillTarget
	err := c.call(ctx, http.MethodPost, "/v1/skill-targets/"+url.PathEscape(targetID)+"/revoke", nil, nil, &out)
	return out, err
}

// PublishSkill sets the desired state of a skill on a target (admin): published at revision (0: follow the current
// revision), or unpublished.
func (c *Client) PublishSkill(ctx context.Context, targetID, name string, revision int64, unpublish bool) (SkillPublication, error) {
	body := map[string]any{"desired_state": "published"}
	if unpublish {
		body["desired_state"] = "unpublished"
	}
	if revision > 0 {
		body["revision"] = revision
	}
	var out SkillPublication
	err := c.call(ctx, http.MethodPut, "/v1/skill-targets/"+url.PathEscape(targetID)+"/publications/"+url.PathEscape(name), nil, body, &out)
	return out, err
}

// ListSkillPublications lists a target's publications (admin).
func (c *Client) ListSkillPublications(ctx context.Context, targetID string) ([]SkillPublication, error) {
	var out struct {
		Items []SkillPublication `json:"items"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/skill-targets/"+url.PathEscape(targetID)+"/publications", nil, nil, &out)
	return out.Items, err
}

// EnrollSkillAgent spends an enrollment token for the agent's own credential (no API token needed). Use the
// credential as the token of a client for the agent methods below.
func (c *Client) EnrollSkillAgent(ctx context.Context, enrollmentToken string) (SkillEnrollment, error) {
	var out SkillEnrollment
	err := c.call(ctx, http.MethodPost, "/v1/skill-agent/enroll", nil, map[string]string{"enrollment_token": enrollmentToken}, &out)
	return out, err
}

// SkillDesired is the calling agent's desired state (the client's token is the agent's credential).
func (c *Client) SkillDesired(ctx context.Context) (SkillDesiredState, error) {
	var out SkillDesiredState
	err := c.call(ctx, http.MethodGet, "/v1/skill-agent/desired", nil, nil, &out)
	return out, err
}

// SkillArchive fetches the archive of a revision desired for the calling agent and checks it against
// archiveDigest (SHA-256, hex) before returning it.
func (c *Client) SkillArchive(ctx context.Context, name string, revision int64, archiveDigest string) ([]byte, error) {
	path := "/v1/skill-agent/skills/" + url.PathEscape(name) + "/revisions/" + strconv.FormatInt(revision, 10) + "/archive"
	resp, err := c.send(ctx, http.MethodGet, path, nil, nil, map[string]string{"Accept": "application/x-tar"})
	if err != nil {
		return nil, err
	}
	if skillpkg.ArchiveDigest(resp.body) != archiveDigest {
		return nil, fmt.Errorf("powercontext: archive of %s revision %d does not match its digest", name, revision)
	}
	return resp.body, nil
}

// ReportSkill reports what the calling agent holds for a skill.
func (c *Client) ReportSkill(ctx context.Context, name string, r SkillReport) (SkillPublication, error) {
	body := map[string]any{}
	if r.ObservedRevision > 0 {
		body["observed_revision"] = r.ObservedRevision
		body["observed_tree_digest"] = r.ObservedTreeDigest
	}
	if r.ErrorCode != "" {
		body["error_code"] = r.ErrorCode
	}
	var out SkillPublication
	err := c.call(ctx, http.MethodPost, "/v1/skill-agent/skills/"+url.PathEscape(name)+"/report", nil, body, &out)
	return out, err
}

// SkillFile is one file of a skill package (api/skillpkg, the format the server writes).
type SkillFile = skillpkg.File

// SkillTreeDigest is the tree digest of files (docs/skills.md#package-format): the SHA-256 (hex) of the lines
// "<sha256 of the content in hex> <path>\n" in path order.
func SkillTreeDigest(files []SkillFile) string { return skillpkg.TreeDigest(files) }

// ReadSkillArchive reads a package archive's regular files, in path order; it refuses absolute paths, "..", links
// and anything beyond 64 files or 1 MiB of content (an error wrapping skillpkg.ErrBadArchive).
func ReadSkillArchive(archive []byte) ([]SkillFile, error) { return skillpkg.Read(archive) }
