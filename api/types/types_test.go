package types_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/api/apitest"
	"github.com/powercontext/powercontext/api/types"
)

// components maps each shared type to the component schema of api/openapi.yaml it implements.
var components = map[reflect.Type]string{
	reflect.TypeFor[types.Time]():                  "Time",
	reflect.TypeFor[types.Eviction]():              "Eviction",
	reflect.TypeFor[types.MethodScores]():          "MethodScores",
	reflect.TypeFor[types.MemoryEntry]():           "MemoryEntry",
	reflect.TypeFor[types.MemoryResponse]():        "Memory",
	reflect.TypeFor[types.MemorySearchResponse]():  "MemorySearch",
	reflect.TypeFor[types.OperationRecord]():       "OperationRecord",
	reflect.TypeFor[types.CaptureSourceResponse](): "CaptureSourceResponse",
	reflect.TypeFor[types.SourceRecord]():          "SourceRecord",
	reflect.TypeFor[types.SourceList]():            "SourceList",
	reflect.TypeFor[types.FlushResponse]():         "FlushResult",
	reflect.TypeFor[types.MemoryRevision]():        "MemoryRevisionRef",
	reflect.TypeFor[types.FlushAccepted]():         "FlushAccepted",
	reflect.TypeFor[types.MemoryRevisionRecord]():  "MemoryRevisionRecord",
	reflect.TypeFor[types.MemoryRevisionList]():    "MemoryRevisionList",
	reflect.TypeFor[types.MemoryDiff]():            "MemoryDiff",
	reflect.TypeFor[types.ContextResponse]():       "Context",
	reflect.TypeFor[types.ContextItem]():           "ContextItem",
	reflect.TypeFor[types.Candidate]():             "Candidate",
	reflect.TypeFor[types.CandidateList]():         "CandidateList",
	reflect.TypeFor[types.IncubateResponse]():      "IncubateResult",
	reflect.TypeFor[types.ForgetSourceResponse]():  "ForgetSourceResponse",
	reflect.TypeFor[types.EraseScopeResponse]():    "EraseScopeResponse",
	reflect.TypeFor[types.OperationList]():         "OperationList",
	reflect.TypeFor[types.Health]():                "Readiness",
	reflect.TypeFor[types.VersionRange]():          "VersionRange",
	reflect.TypeFor[types.Member]():                "Member",
	reflect.TypeFor[types.MemberList]():            "MemberList",
	// Skills (docs/skills.md) and portability (docs/portability.md).
	reflect.TypeFor[types.Skill]():                         "Skill",
	reflect.TypeFor[types.Items[types.Skill]]():            "SkillList",
	reflect.TypeFor[types.SkillRevision]():                 "SkillRevision",
	reflect.TypeFor[types.Items[types.SkillRevision]]():    "SkillRevisionList",
	reflect.TypeFor[types.SkillTarget]():                   "SkillTarget",
	reflect.TypeFor[types.Items[types.SkillTarget]]():      "SkillTargetList",
	reflect.TypeFor[types.RegisterSkillTargetResponse]():   "RegisterSkillTargetResponse",
	reflect.TypeFor[types.SkillPublication]():              "SkillPublication",
	reflect.TypeFor[types.Items[types.SkillPublication]](): "SkillPublicationList",
	reflect.TypeFor[types.EnrollSkillAgentResponse]():      "EnrollSkillAgentResponse",
	reflect.TypeFor[types.DesiredState]():                  "SkillDesiredState",
	reflect.TypeFor[types.ImportScopeResponse]():           "ImportScopeResponse",
}

// requests maps each request body to its schema (compared by names and JSON types only: DecodedShapeProblems).
var requests = map[reflect.Type]string{
	reflect.TypeFor[types.CaptureSourceRequest]():       "CaptureSourceRequest",
	reflect.TypeFor[types.FlushRequest]():               "FlushRequest",
	reflect.TypeFor[types.ExpectedVersionRequest]():     "#/components/requestBodies/ExpectedVersion/content/application~1json/schema",
	reflect.TypeFor[types.RegisterSkillTargetRequest](): "RegisterSkillTargetRequest",
	reflect.TypeFor[types.PutSkillPublicationRequest](): "PutSkillPublicationRequest",
	reflect.TypeFor[types.EnrollSkillAgentRequest]():    "EnrollSkillAgentRequest",
	reflect.TypeFor[types.SkillReportRequest]():         "SkillReportRequest",
}

// nested are the types with no component of their own: the document declares them inline in a parent's property,
// where the parent's check compares them.
var nested = map[string]string{"OperationError": "OperationRecord.error", "MemoryDiffEntry": "MemoryDiff.changed",
	"DesiredSkill": "SkillDesiredState.items", "ImportCounts": "ImportScopeResponse.counts"}

// Field names, required-ness, nullability and JSON types of every shared type agree with the document.
func TestSchemasMatchOpenAPI(t *testing.T) {
	for typ, component := range components {
		if typ == reflect.TypeFor[types.Time]() {
			continue // a string on the wire (MarshalJSON); checked as a field of the others
		}
		for _, p := range apitest.ShapeProblems(typ, component) {
			t.Errorf("%s: %s", typ, p)
		}
	}
	for typ, schema := range requests {
		for _, p := range apitest.DecodedShapeProblems(typ, schema) {
			t.Errorf("%s: %s", typ, p)
		}
	}
}

// Every type declared in this package is in components, requests or nested, so a new one cannot skip the check above.
func TestEveryTypeIsChecked(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	known := map[string]bool{}
	for typ := range components {
		name, _, _ := strings.Cut(typ.Name(), "[") // a generic list, Items[T], is declared once as Items
		known[name] = true
	}
	for typ := range requests {
		known[typ.Name()] = true
	}
	for name := range nested {
		known[name] = true
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					typ := s.(*ast.TypeSpec).Name.Name
					require.True(t, known[typ], "api/types.%s is not mapped to a component schema", typ)
				}
			}
		}
	}
}

// The checker finds a mismatch: a field the schema does not name, and a wrong JSON type.
func TestShapeProblemsCatchesMismatches(t *testing.T) {
	type wrong struct {
		Count    string  `json:"count"`
		EntryIDs []int64 `json:"entry_ids"`
		Extra    int     `json:"extra"`
	}
	require.Len(t, apitest.ShapeProblems(reflect.TypeFor[wrong](), "Eviction"), 2)
}
