package mcp

import (
	"context"
	"errors"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/skills"
)

// Names of the tools over Skills (docs/skills.md#mcp-tools).
const (
	ToolListSkills = "list_skills"
	ToolGetSkill   = "get_skill"
)

// Limits of the Skills tools.
const (
	defaultSkillLimit = 50
	maxSkillLimit     = 100
	// maxSkillText bounds the skill file text get_skill returns (truncated at a character boundary beyond).
	maxSkillText = 256 << 10
)

var (
	errSkillNotFound    = &ToolError{Code: "skill_not_found", Field: "skill_name", Message: "no such skill in that scope"}
	errSkillRevNotFound = &ToolError{Code: "revision_not_found", Field: "revision", Message: "no such revision of that skill"}
	errSkillName        = &ToolError{Code: "invalid_request", Field: "skill_name",
		Message: "must be 1..64 characters of a-z, 0-9 and single hyphens, not starting or ending with a hyphen"}
)

// ListSkillsInput is the argument object of list_skills.
type ListSkillsInput struct {
	ScopeID string `json:"scope_id" jsonschema:"scope whose skills to list (1..256 bytes)"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"most skills to list (1..100, default 50)"`
}

// ListSkillsOutput is the result of list_skills.
type ListSkillsOutput struct {
	Items []SkillSummary `json:"items"`
}

// SkillSummary is one skill with its current revision and that revision's digests.
type SkillSummary struct {
	ScopeID         string `json:"scope_id"`
	Name            string `json:"name"`
	CurrentRevision int64  `json:"current_revision" jsonschema:"the revision agents are offered"`
	TreeDigest      string `json:"tree_digest" jsonschema:"SHA-256 (hex) of the current revision's file tree (docs/skills.md#package-format)"`
	ArchiveDigest   string `json:"archive_digest" jsonschema:"SHA-256 (hex) of the current revision's archive"`
	FileCount       int32  `json:"file_count"`
	ByteSize        int64  `json:"byte_size" jsonschema:"total bytes of the current revision's files"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
}

// GetSkillInput is the argument object of get_skill.
type GetSkillInput struct {
	ScopeID   string `json:"scope_id" jsonschema:"scope of the skill (1..256 bytes)"`
	SkillName string `json:"skill_name" jsonschema:"name of the skill (see list_skills)"`
	Revision  *int64 `json:"revision,omitempty" jsonschema:"a revision to read instead of the current one (>= 1)"`
}

// GetSkillOutput is the result of get_skill: one revision's skill file text and file list.
type GetSkillOutput struct {
	ScopeID         string      `json:"scope_id"`
	Name            string      `json:"name"`
	Revision        int64       `json:"revision" jsonschema:"the revision read"`
	CurrentRevision int64       `json:"current_revision" jsonschema:"the revision agents are offered"`
	TreeDigest      string      `json:"tree_digest"`
	ArchiveDigest   string      `json:"archive_digest"`
	ByteSize        int64       `json:"byte_size"`
	CreatedAt       string      `json:"created_at" jsonschema:"when the revision was packaged"`
	SkillMD         string      `json:"skill_md" jsonschema:"the text of the skill file (<name>/SKILL.md), at most 262144 bytes"`
	Truncated       bool        `json:"truncated" jsonschema:"true when skill_md was cut at 262144 bytes"`
	Files           []SkillFile `json:"files" jsonschema:"every file of the package, in path order"`
}

// SkillFile is one file of a package.
type SkillFile struct {
	Path string `json:"path"`
	Size int    `json:"size"`
}

func (t *tools) registerSkills(s *sdk.Server) {
	addTool(t, s, &sdk.Tool{
		Name:  ToolListSkills,
		Title: "List a scope's skills",
		Description: "List a scope's Skills (approved Experience lessons packaged as Agent Skills), by name: each " +
			"skill's current revision with its tree and archive digests, file count and size. Read one with get_skill.",
		Annotations: readOnly(),
	}, t.listSkills)
	addTool(t, s, &sdk.Tool{
		Name:  ToolGetSkill,
		Title: "Get a skill",
		Description: "Return the text of one skill's skill file (<name>/SKILL.md) and file list at its current revision, or at revision, read " +
			"from the stored package, with the revision's digests.",
		Annotations: readOnly(),
	}, t.getSkill)
}

func (t *tools) listSkills(ctx context.Context, _ *sdk.CallToolRequest, in ListSkillsInput) (*sdk.CallToolResult, ListSkillsOutput, error) {
	if t.d.Skills == nil {
		return nil, ListSkillsOutput{}, notReady("skills")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}); err != nil {
		return nil, ListSkillsOutput{}, err
	}
	limit := defaultSkillLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	if limit < 1 || limit > maxSkillLimit {
		return nil, ListSkillsOutput{}, &ToolError{Code: "invalid_request", Field: "limit", Message: "must be 1..100"}
	}
	rows, err := t.d.Skills.Current(ctx, in.ScopeID, limit)
	if err != nil {
		return nil, ListSkillsOutput{}, t.toolError(ToolListSkills, err)
	}
	out := ListSkillsOutput{Items: make([]SkillSummary, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, SkillSummary{ScopeID: r.Skill.ScopeID, Name: r.Skill.SkillName, CurrentRevision: r.Skill.CurrentRevision,
			TreeDigest: r.Revision.TreeDigest, ArchiveDigest: r.Revision.ArchiveDigest, FileCount: r.Revision.FileCount,
			ByteSize: r.Revision.ByteSize, CreatedAt: formatTime(r.Skill.CreatedAt), UpdatedAt: formatTime(r.Skill.UpdatedAt)})
	}
	return nil, out, nil
}

func (t *tools) getSkill(ctx context.Context, _ *sdk.CallToolRequest, in GetSkillInput) (*sdk.CallToolResult, GetSkillOutput, error) {
	if t.d.Skills == nil {
		return nil, GetSkillOutput{}, notReady("skills")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}, field{"skill_name", in.SkillName}); err != nil {
		return nil, GetSkillOutput{}, err
	}
	if !skills.ValidName(in.SkillName) {
		return nil, GetSkillOutput{}, errSkillName
	}
	if in.Revision != nil && *in.Revision < 1 {
		return nil, GetSkillOutput{}, &ToolError{Code: "invalid_request", Field: "revision", Message: "must be >= 1"}
	}
	sk, err := t.d.Skills.Skill(ctx, in.ScopeID, in.SkillName)
	if errors.Is(err, db.ErrNotFound) {
		return nil, GetSkillOutput{}, errSkillNotFound
	}
	if err != nil {
		return nil, GetSkillOutput{}, t.toolError(ToolGetSkill, err)
	}
	revision := sk.CurrentRevision
	if in.Revision != nil {
		revision = *in.Revision
	}
	rev, files, err := t.d.Skills.Read(ctx, in.ScopeID, in.SkillName, revision)
	if errors.Is(err, db.ErrNotFound) {
		return nil, GetSkillOutput{}, errSkillRevNotFound
	}
	if err != nil {
		return nil, GetSkillOutput{}, t.toolError(ToolGetSkill, err)
	}
	out := GetSkillOutput{ScopeID: rev.ScopeID, Name: rev.SkillName, Revision: rev.Revision, CurrentRevision: sk.CurrentRevision,
		TreeDigest: rev.TreeDigest, ArchiveDigest: rev.ArchiveDigest, ByteSize: rev.ByteSize, CreatedAt: formatTime(rev.CreatedAt),
		Files: make([]SkillFile, 0, len(files))}
	for _, f := range files {
		out.Files = append(out.Files, SkillFile{Path: f.Path, Size: len(f.Content)})
		if f.Path == skills.SkillFile {
			out.SkillMD, out.Truncated = boundedText(f.Content, maxSkillText)
		}
	}
	return nil, out, nil
}

// boundedText is b as a string of at most n bytes, cut at a character boundary; true when it was cut.
func boundedText(b []byte, n int) (string, bool) {
	if len(b) <= n {
		return string(b), false
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]), true
}
