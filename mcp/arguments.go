package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// argSchema is the part of a tool's input schema the server checks itself before the SDK sees the arguments, so
// that a wrong argument is answered in the documented "invalid_request: field: message" form rather than with the
// schema validator's text. The input schemas use only these keywords (type, enum, minimum, required,
// additionalProperties false), so an argument object that passes here also passes the SDK's own validation.
type argSchema struct {
	props    map[string]argProp
	names    []string // property names, sorted
	required []string
}

type argProp struct {
	typ     string // string, integer, number, boolean or object
	enum    []string
	minimum *float64
}

// schemaDoc is the JSON form of an input schema, as far as argSchema reads it.
type schemaDoc struct {
	Type       string `json:"type"`
	Properties map[string]struct {
		Type    any      `json:"type"`
		Enum    []string `json:"enum"`
		Minimum *float64 `json:"minimum"`
	} `json:"properties"`
	Required             []string `json:"required"`
	AdditionalProperties *bool    `json:"additionalProperties"`
}

// parseArgSchema reads an input schema; a schema outside the supported keywords is a programming error.
func parseArgSchema(raw json.RawMessage) (argSchema, error) {
	var doc schemaDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return argSchema{}, err
	}
	if doc.Type != "object" || doc.AdditionalProperties == nil || *doc.AdditionalProperties {
		return argSchema{}, fmt.Errorf("input schema must be an object with additionalProperties false")
	}
	s := argSchema{props: map[string]argProp{}, required: doc.Required}
	for name, p := range doc.Properties {
		typ, ok := p.Type.(string)
		if !ok {
			return argSchema{}, fmt.Errorf("property %s: type must be one plain type, not %v", name, p.Type)
		}
		switch typ {
		case "string", "integer", "number", "boolean", "object":
		default:
			return argSchema{}, fmt.Errorf("property %s: unsupported type %s", name, typ)
		}
		s.props[name] = argProp{typ: typ, enum: p.Enum, minimum: p.Minimum}
		s.names = append(s.names, name)
	}
	slices.Sort(s.names)
	return s, nil
}

// inputSchemaFor infers the input schema of a Go argument type like the SDK does, except that an optional
// pointer field (absent = the default) is a plain "integer" or "number" rather than ["null","integer"]: clients
// such as the MCP Inspector convert a typed argument only when its type is a single one (issue: they sent "10").
func inputSchemaFor[In any]() json.RawMessage {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: input schema: %v", err))
	}
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("mcp: input schema: %v", err))
	}
	return raw
}

// addTool registers a tool with an explicit input schema (inferred from In when the tool has none) and records
// that schema for checkArguments.
func addTool[In, Out any](t *tools, s *sdk.Server, tool *sdk.Tool, h sdk.ToolHandlerFor[In, Out]) {
	raw, ok := tool.InputSchema.(json.RawMessage)
	if tool.InputSchema == nil {
		raw, ok = inputSchemaFor[In](), true
		tool.InputSchema = raw
	}
	if !ok {
		panic("mcp: tool " + tool.Name + ": the input schema must be JSON")
	}
	spec, err := parseArgSchema(raw)
	if err != nil {
		panic("mcp: tool " + tool.Name + ": " + err.Error())
	}
	t.args[tool.Name] = spec
	sdk.AddTool(s, tool, h)
}

// check validates an argument object and returns it without the optional arguments given as null (null means
// absent, the default). The first problem found is the error: the argument object itself, then unknown names,
// missing required names, then each value in name order.
func (s argSchema) check(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var args map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &args) != nil {
		return nil, invalidArg("arguments", "must be a JSON object")
	}
	var unknown []string
	for name := range args {
		if _, ok := s.props[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, invalidArg(boundedName(unknown[0]), "is not an argument of this tool")
	}
	dropped := false
	for _, name := range s.names {
		v, ok := args[name]
		if ok && string(bytes.TrimSpace(v)) == "null" && !slices.Contains(s.required, name) {
			delete(args, name)
			dropped = true
		}
	}
	for _, name := range s.required {
		if _, ok := args[name]; !ok {
			return nil, invalidArg(name, "is required")
		}
	}
	for _, name := range s.names {
		if v, ok := args[name]; ok {
			if err := s.props[name].check(name, bytes.TrimSpace(v)); err != nil {
				return nil, err
			}
		}
	}
	if !dropped {
		return raw, nil
	}
	out, err := json.Marshal(args)
	if err != nil {
		return nil, invalidArg("arguments", "must be a JSON object")
	}
	return out, nil
}

func (p argProp) check(name string, v json.RawMessage) error {
	switch p.typ {
	case "string":
		var str string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &str) != nil {
			return invalidArg(name, "must be a string")
		}
		if len(p.enum) > 0 && !slices.Contains(p.enum, str) {
			return invalidArg(name, "must be one of "+strings.Join(p.enum, ", "))
		}
		return nil
	case "object":
		if len(v) == 0 || v[0] != '{' {
			return invalidArg(name, "must be a JSON object")
		}
		return nil
	case "boolean":
		if string(v) != "true" && string(v) != "false" {
			return invalidArg(name, "must be true or false")
		}
		return nil
	}
	// integer or number
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return invalidArg(name, "must be "+article(p.typ))
	}
	if p.typ == "integer" {
		if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
			return invalidArg(name, "must be an integer")
		}
	}
	if p.minimum != nil && f < *p.minimum {
		return invalidArg(name, "must be >= "+strconv.FormatFloat(*p.minimum, 'f', -1, 64))
	}
	return nil
}

func article(typ string) string {
	if typ == "integer" {
		return "an integer"
	}
	return "a number"
}

func invalidArg(field, msg string) error {
	return &ToolError{Code: "invalid_request", Field: field, Message: msg}
}

// boundedName keeps an unknown argument's name short and printable in the error text.
func boundedName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	if len(name) > 64 {
		name = strings.ToValidUTF8(name[:64], "") + "…"
	}
	if name == "" {
		return "arguments"
	}
	return name
}

// checkArguments is a receiving middleware: a tools/call of a known tool whose arguments do not match its input
// schema is answered with the invalid_request tool error before the SDK validates them (an unknown tool is left
// to the SDK, whose JSON-RPC error errorShape rewrites).
func (t *tools) checkArguments(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		spec, ok := t.args[call.Params.Name]
		if !ok {
			return next(ctx, method, req)
		}
		args, err := spec.check(call.Params.Arguments)
		if err != nil {
			return errorResult(err), nil
		}
		call.Params.Arguments = args
		return next(ctx, method, req)
	}
}

// errorResult is the tool error result of err (isError true, its text the only content).
func errorResult(err error) *sdk.CallToolResult {
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
	res.IsError = true
	return res
}
