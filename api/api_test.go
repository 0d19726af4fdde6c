package api_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	"github.com/pb33f/libopenapi/orderedmap"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/powercontext/powercontext/api"
	"github.com/powercontext/powercontext/api/apitest"
)

// The document is valid OpenAPI 3.1 (checked against the 3.1 meta-schema) and every $ref resolves.
func TestDocumentIsValidOpenAPI31(t *testing.T) {
	doc, err := libopenapi.NewDocument(api.YAML())
	require.NoError(t, err)
	require.Equal(t, "3.1.0", doc.GetVersion())
	_, err = doc.BuildV3Model()
	require.NoError(t, err, "every $ref resolves")
	v, errs := validator.NewValidator(doc)
	require.Empty(t, errs)
	ok, verrs := v.ValidateDocument()
	for _, e := range verrs {
		t.Errorf("%s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			t.Errorf("  %s at %s (line %d)", f.Reason, f.KeywordLocation, f.Line)
		}
	}
	require.True(t, ok)
	_, err = apitest.Load()
	require.NoError(t, err)
}

// Every operation has an id, a summary and a documented X-Request-ID on every response.
func TestEveryOperationIsDescribed(t *testing.T) {
	s, err := apitest.Load()
	require.NoError(t, err)
	ids := map[string]string{}
	for path, item := range s.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			where := strings.ToUpper(method) + " " + path
			require.NotEmpty(t, op.OperationId, where)
			require.NotEmpty(t, op.Summary, where)
			if prev, dup := ids[op.OperationId]; dup {
				t.Errorf("operationId %s used by %s and %s", op.OperationId, prev, where)
			}
			ids[op.OperationId] = where
			require.NotNil(t, op.Responses, where)
			for code, r := range op.Responses.Codes.FromOldest() {
				require.NotNil(t, r.Headers, "%s %s: no headers", where, code)
				h := r.Headers.GetOrZero("X-Request-ID")
				require.NotNil(t, h, "%s %s: X-Request-ID is not documented", where, code)
				require.True(t, h.Required, "%s %s: X-Request-ID must be required", where, code)
			}
		}
	}
}

// The JSON served at /openapi.json is the YAML document, key order kept.
func TestJSONIsTheYAMLDocument(t *testing.T) {
	j, err := api.JSON()
	require.NoError(t, err)
	var fromJSON, fromYAML any
	require.NoError(t, json.Unmarshal(j, &fromJSON))
	require.NoError(t, yaml.Unmarshal(api.YAML(), &fromYAML))
	want, err := json.Marshal(fromYAML)
	require.NoError(t, err)
	got, err := json.Marshal(fromJSON)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
	require.True(t, strings.HasPrefix(string(j), `{"openapi":"3.1.0","info":`), "key order is the YAML's")
}

func TestToJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"b: 1\na: [x, 2.5, true, null, '3']\n", `{"b":1,"a":["x",2.5,true,null,"3"]}`},
		{"x: &a {k: v}\ny: *a\n", `{"x":{"k":"v"},"y":{"k":"v"}}`},
		{"s: \"quote \\\" and \\u00e9\"\n", `{"s":"quote \" and é"}`},
	} {
		got, err := api.ToJSON([]byte(c.in))
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, string(got), c.in)
	}
	for _, bad := range []string{"1: x\n", "x: .nan\n", "x: !!binary aGk=\n"} {
		_, err := api.ToJSON([]byte(bad))
		require.Error(t, err, bad)
	}
}

// A server without a token configured (allowed only on a loopback listen address) needs no credentials, so every
// operation that names a credential also offers the empty alternative `{}`; the public routes name none.
func TestCredentialsAreOptionalWhereTheServerAllowsNoToken(t *testing.T) {
	s, err := apitest.Load()
	require.NoError(t, err)
	public := map[string]bool{"/health/live": true, "/health/ready": true, "/metrics": true,
		"/ui/login": true, "/ui/logout": true, "/v1/skill-agent/enroll": true}
	for path, item := range s.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			where := strings.ToUpper(method) + " " + path
			reqs := op.Security
			if reqs == nil {
				reqs = s.Model.Security
			}
			if public[path] {
				require.Empty(t, reqs, "%s is public", where)
				continue
			}
			named, empty := 0, false
			for _, r := range reqs {
				if r.ContainsEmptyRequirement || r.Requirements == nil || r.Requirements.Len() == 0 {
					empty = true
				} else {
					named++
				}
			}
			require.NotZero(t, named, "%s names its credential", where)
			if strings.HasPrefix(path, "/v1/skill-agent/") {
				// An agent's skill routes take its own credential whatever the server's tokens (docs/skills.md).
				require.False(t, empty, "%s needs the agent's credential even without server tokens", where)
				continue
			}
			require.True(t, empty, "%s: add the empty requirement {} (a server without a token needs none)", where)
		}
	}
}

// Every parameter and request body has an example (contract testers such as Dredd build requests from them), and
// every example is valid against its schema.
func TestEveryParameterAndBodyHasAValidExample(t *testing.T) {
	s, err := apitest.Load()
	require.NoError(t, err)
	sv := schema_validation.NewSchemaValidator(config.WithFormatAssertions())
	type decoder interface{ Decode(any) error }
	check := func(where string, schema *base.SchemaProxy, example decoder, examples *orderedmap.Map[string, *base.Example]) {
		var values []any
		if example != nil && !reflect.ValueOf(example).IsNil() {
			var v any
			require.NoError(t, example.Decode(&v), where)
			values = append(values, v)
		}
		for name, ex := range examples.FromOldest() {
			var v any
			require.NoError(t, ex.Value.Decode(&v), "%s example %s", where, name)
			values = append(values, v)
		}
		if !assert.NotEmpty(t, values, "%s has no example", where) || schema == nil {
			return
		}
		for _, v := range values {
			ok, errs := sv.ValidateSchemaObject(schema.Schema(), v)
			for _, e := range errs {
				t.Errorf("%s: example %v: %s", where, v, e.Reason)
			}
			assert.True(t, ok, "%s: example %v", where, v)
		}
	}
	for path, item := range s.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			where := strings.ToUpper(method) + " " + path
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				check(where+" "+p.In+" "+p.Name, p.Schema, p.Example, p.Examples)
			}
			if op.RequestBody == nil {
				continue
			}
			for ct, mt := range op.RequestBody.Content.FromOldest() {
				check(where+" body "+ct, mt.Schema, mt.Example, mt.Examples)
			}
		}
	}
}
