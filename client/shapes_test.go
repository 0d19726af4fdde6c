package client_test

import (
	"reflect"
	"testing"

	"github.com/powercontext/powercontext/api/apitest"
	"github.com/powercontext/powercontext/client"
)

// The client keeps its own exported body types (its users should not import the server's packages); they decode the
// same JSON, so their field names and JSON types must be the document's.
func TestBodiesMatchOpenAPI(t *testing.T) {
	// Properties the client does not expose (yet): each is named, so a new one is not dropped unnoticed.
	omitted := map[string]bool{
		"EraseScopeResponse.status_url: the schema's property has no field in client.EraseScopeResult":          true,
		"ForgetSourceResponse.status_url: the schema's property has no field in client.ForgetSourceResult":      true,
		"MemoryFlushOperationResult.embeddings: the schema's property has no field in client.MemoryFlushResult": true,
	}
	for typ, schema := range map[reflect.Type]string{
		reflect.TypeFor[client.CaptureSourceRequest]():       "CaptureSourceRequest",
		reflect.TypeFor[client.CaptureSourceResult]():        "CaptureSourceResponse",
		reflect.TypeFor[client.ForgetSourceResult]():         "ForgetSourceResponse",
		reflect.TypeFor[client.EraseScopeResult]():           "EraseScopeResponse",
		reflect.TypeFor[client.SourceRecord]():               "SourceRecord",
		reflect.TypeFor[client.SourceList]():                 "SourceList",
		reflect.TypeFor[client.MemoryRevision]():             "MemoryRevisionRef",
		reflect.TypeFor[client.FlushResult]():                "FlushResult",
		reflect.TypeFor[client.IncubateResult]():             "IncubateResult",
		reflect.TypeFor[client.FlushAccepted]():              "FlushAccepted",
		reflect.TypeFor[client.MemoryFlushResult]():          "MemoryFlushOperationResult",
		reflect.TypeFor[client.ExperienceIncubationResult](): "ExperienceIncubationOperationResult",
		reflect.TypeFor[client.Memory]():                     "MemorySearch", // GET /v1/memory's Memory plus mode and degraded
		reflect.TypeFor[client.Eviction]():                   "Eviction",
		reflect.TypeFor[client.MemoryEntry]():                "MemoryEntry",
		reflect.TypeFor[client.MethodScores]():               "MethodScores",
		reflect.TypeFor[client.MemoryRevisionRecord]():       "MemoryRevisionRecord",
		reflect.TypeFor[client.MemoryRevisionList]():         "MemoryRevisionList",
		reflect.TypeFor[client.MemoryDiff]():                 "MemoryDiff",
		reflect.TypeFor[client.Context]():                    "Context",
		reflect.TypeFor[client.ContextItem]():                "ContextItem",
		reflect.TypeFor[client.OperationRecord]():            "OperationRecord",
		reflect.TypeFor[client.OperationList]():              "OperationList",
		reflect.TypeFor[client.Candidate]():                  "Candidate",
		reflect.TypeFor[client.CandidateList]():              "CandidateList",
		reflect.TypeFor[client.Member]():                     "Member",
		reflect.TypeFor[client.VersionRange]():               "VersionRange",
		reflect.TypeFor[client.Health]():                     "Readiness",
	} {
		for _, p := range apitest.DecodedShapeProblems(typ, schema) {
			if !omitted[p] {
				t.Errorf("%s: %s", typ, p)
			}
		}
	}
}
