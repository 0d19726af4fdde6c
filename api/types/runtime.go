package types

// Health is the body of /health/ready (and of /health/live, without checks).
type Health struct {
	Status string         `json:"status"`
	Checks map[string]any `json:"checks"`
}

// Member is one live runtime member: identity, role, build and version ranges, heartbeat. No secrets.
type Member struct {
	MemberID         string       `json:"member_id"`
	Role             string       `json:"role"`
	BuildVersion     string       `json:"build_version"`
	SchemaVersions   VersionRange `json:"schema_versions"`
	PayloadVersions  VersionRange `json:"payload_versions"`
	BehaviorRevision string       `json:"behavior_revision"`
	StartedAt        Time         `json:"started_at"`
	HeartbeatAt      Time         `json:"heartbeat_at"`
	ExpiresAt        Time         `json:"expires_at"`
}

// VersionRange is an inclusive range of versions.
type VersionRange struct {
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// MemberList is the answer of GET /v1/runtime/members.
type MemberList struct {
	Items []Member `json:"items"`
}
