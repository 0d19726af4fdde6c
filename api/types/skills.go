package types

import "encoding/json"

// Skill is one skill of a scope.
type Skill struct {
	ScopeID         string `json:"scope_id"`
	Name            string `json:"name"`
	CurrentRevision int64  `json:"current_revision"`
	CreatedAt       Time   `json:"created_at"`
	UpdatedAt       Time   `json:"updated_at"`
}

// SkillRevision is one revision of a skill (its archive is served to agents only).
type SkillRevision struct {
	Revision           int64           `json:"revision"`
	TreeDigest         string          `json:"tree_digest"`
	ArchiveDigest      string          `json:"archive_digest"`
	FileCount          int32           `json:"file_count"`
	ByteSize           int64           `json:"byte_size"`
	SourceCandidateIDs json.RawMessage `json:"source_candidate_ids"`
	CreatedAt          Time            `json:"created_at"`
}

// SkillTarget is one agent installation; its enrollment token and credential are never shown.
type SkillTarget struct {
	TargetID            string `json:"target_id"`
	ScopeID             string `json:"scope_id"`
	AgentKind           string `json:"agent_kind"`
	DisplayName         string `json:"display_name"`
	Enrolled            bool   `json:"enrolled"`
	EnrollmentExpiresAt *Time  `json:"enrollment_expires_at"`
	RevokedAt           *Time  `json:"revoked_at"`
	Generation          int64  `json:"generation"`
	CreatedAt           Time   `json:"created_at"`
	UpdatedAt           Time   `json:"updated_at"`
}

// SkillPublication is the desired and observed state of one skill on one target.
type SkillPublication struct {
	TargetID           string  `json:"target_id"`
	SkillName          string  `json:"skill_name"`
	ScopeID            string  `json:"scope_id"`
	DesiredState       string  `json:"desired_state"`
	DesiredRevision    int64   `json:"desired_revision"`
	ObservedRevision   *int64  `json:"observed_revision"`
	ObservedTreeDigest *string `json:"observed_tree_digest"`
	ErrorCode          *string `json:"error_code"`
	State              string  `json:"state"`
	Generation         int64   `json:"generation"`
	CreatedAt          Time    `json:"created_at"`
	UpdatedAt          Time    `json:"updated_at"`
}

// Items is a list answer.
type Items[T any] struct {
	Items []T `json:"items"`
}

// RegisterSkillTargetRequest is the body of POST /v1/skill-targets.
type RegisterSkillTargetRequest struct {
	ScopeID     string `json:"scope_id"`
	AgentKind   string `json:"agent_kind"`
	DisplayName string `json:"display_name"`
}

// RegisterSkillTargetResponse carries the one-time enrollment token: it is shown once and stored only as a digest.
type RegisterSkillTargetResponse struct {
	Target          SkillTarget `json:"target"`
	EnrollmentToken string      `json:"enrollment_token"`
}

// PutSkillPublicationRequest is the body of PUT /v1/skill-targets/{target_id}/publications/{skill_name}.
type PutSkillPublicationRequest struct {
	DesiredState string `json:"desired_state"`
	// Revision pins a revision (a rollback); absent, the publication follows the skill's current revision.
	Revision *int64 `json:"revision"`
}

// EnrollSkillAgentRequest is the body of POST /v1/skill-agent/enroll.
type EnrollSkillAgentRequest struct {
	EnrollmentToken string `json:"enrollment_token"`
}

// EnrollSkillAgentResponse carries the agent's credential, shown once and stored only as a digest.
type EnrollSkillAgentResponse struct {
	TargetID   string `json:"target_id"`
	ScopeID    string `json:"scope_id"`
	Credential string `json:"credential"`
}

// DesiredSkill is one entry of an agent's desired state.
type DesiredSkill struct {
	SkillName     string  `json:"skill_name"`
	DesiredState  string  `json:"desired_state"`
	Revision      int64   `json:"revision"`
	TreeDigest    *string `json:"tree_digest"`
	ArchiveDigest *string `json:"archive_digest"`
	State         string  `json:"state"`
	Generation    int64   `json:"generation"`
}

// DesiredState is the answer of GET /v1/skill-agent/desired.
type DesiredState struct {
	TargetID string         `json:"target_id"`
	Items    []DesiredSkill `json:"items"`
}

// SkillReportRequest is the body of POST /v1/skill-agent/skills/{skill_name}/report: a revision and the tree
// digest of the folder (both absent when the agent holds none), or an error code.
type SkillReportRequest struct {
	ObservedRevision   *int64  `json:"observed_revision"`
	ObservedTreeDigest *string `json:"observed_tree_digest"`
	ErrorCode          *string `json:"error_code"`
}
