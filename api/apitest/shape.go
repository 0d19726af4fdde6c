package apitest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/powercontext/powercontext/api"
)

// ShapeProblems compares a Go body type with the component schema it implements
// (#/components/schemas/<component>): the JSON names of its fields must be the schema's properties, a field without
// omitempty must be required and one with it optional, a pointer field (not omitempty) must allow null and any other
// field must not, and each field's JSON type must be the property's. Nested structs, slices of them and one-of
// alternatives are compared the same way. It returns one line per mismatch, none when the shapes agree.
//
// Two encodings are taken on trust: a type with its own MarshalJSON (a timestamp) must be a string, and
// json.RawMessage (stored JSON passed through) may be anything.
//
// component may also be a JSON pointer into the document ("#/components/requestBodies/…/schema") for a schema
// declared inline.
func ShapeProblems(t reflect.Type, component string) []string {
	return shapeProblems(t, component, false)
}

// DecodedShapeProblems is ShapeProblems for a type that is only decoded from the JSON (a request body in the
// server, any body in a client): the names and JSON types must agree, but omitempty and pointers say nothing there
// (a pointer tells an absent value from zero; an optional field decodes the same with or without omitempty), so
// required-ness and null are not compared.
func DecodedShapeProblems(t reflect.Type, component string) []string {
	return shapeProblems(t, component, true)
}

func shapeProblems(t reflect.Type, component string, request bool) []string {
	doc, err := api.JSON()
	if err != nil {
		return []string{err.Error()}
	}
	var root map[string]any
	if err := json.Unmarshal(doc, &root); err != nil {
		return []string{err.Error()}
	}
	components, _ := root["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	pointer := component
	if !strings.HasPrefix(pointer, "#/") {
		pointer = "#/components/schemas/" + component
	}
	var s any = root
	for _, key := range strings.Split(strings.TrimPrefix(pointer, "#/"), "/") {
		m, _ := s.(map[string]any)
		s = m[strings.ReplaceAll(strings.ReplaceAll(key, "~1", "/"), "~0", "~")]
	}
	schema, ok := s.(map[string]any)
	if !ok {
		return []string{"no schema at " + pointer}
	}
	c := shapeChecker{schemas: schemas, request: request}
	c.structure(t, schema, component)
	return c.problems
}

type shapeChecker struct {
	schemas  map[string]any
	request  bool
	problems []string
}

func (c *shapeChecker) fail(where, format string, args ...any) {
	c.problems = append(c.problems, where+": "+fmt.Sprintf(format, args...))
}

// resolve follows $ref and splits oneOf/anyOf/type lists into the non-null alternatives and whether null is one.
func (c *shapeChecker) resolve(s map[string]any) (alts []map[string]any, null bool) {
	if ref, ok := s["$ref"].(string); ok {
		target, _ := c.schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		return c.resolve(target)
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if list, ok := s[key].([]any); ok {
			for _, a := range list {
				as, n := c.resolve(a.(map[string]any))
				alts, null = append(alts, as...), null || n
			}
			return alts, null
		}
	}
	if types, ok := s["type"].([]any); ok {
		rest := map[string]any{}
		for k, v := range s {
			rest[k] = v
		}
		for _, ty := range types {
			if ty == "null" {
				null = true
			} else {
				rest["type"] = ty
			}
		}
		return []map[string]any{rest}, null
	}
	if s["type"] == "null" {
		return nil, true
	}
	return []map[string]any{s}, false
}

var (
	rawMessage = reflect.TypeFor[json.RawMessage]()
	marshaler  = reflect.TypeFor[json.Marshaler]()
)

// jsonFields lists a struct's fields by JSON name, embedded structs flattened as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

func (c *shapeChecker) structure(t reflect.Type, s map[string]any, where string) {
	alts, _ := c.resolve(s)
	if len(alts) != 1 || alts[0]["type"] != "object" {
		c.fail(where, "%s is a struct but the schema is not one object", t)
		return
	}
	s = alts[0]
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	if list, ok := s["required"].([]any); ok {
		for _, r := range list {
			required[r.(string)] = true
		}
	}
	fields := jsonFields(t)
	var names []string
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := fields[name]
		at := where + "." + name
		p, ok := props[name].(map[string]any)
		if !ok {
			c.fail(at, "%s.%s is not a property of the schema", t, f.Name)
			continue
		}
		omitempty := slices.Contains(strings.Split(f.Tag.Get("json"), ",")[1:], "omitempty")
		if !c.request && required[name] == omitempty {
			c.fail(at, "omitempty is %v but required is %v", omitempty, required[name])
		}
		c.value(f.Type, p, at, omitempty)
	}
	for name := range props {
		if _, ok := fields[name]; !ok {
			c.fail(where+"."+name, "the schema's property has no field in %s", t)
		}
	}
}

func (c *shapeChecker) value(t reflect.Type, s map[string]any, where string, omitempty bool) {
	if t == rawMessage {
		return
	}
	alts, null := c.resolve(s)
	pointer := t.Kind() == reflect.Pointer
	if pointer {
		t = t.Elem()
	}
	if pointer && !omitempty && !null && !c.request {
		c.fail(where, "a pointer (null) but the schema does not allow null")
	}
	if !pointer && null && t.Kind() != reflect.Slice && t.Kind() != reflect.Map {
		c.fail(where, "the schema allows null but %s cannot be null", t)
	}
	var want string
	switch {
	case t.Implements(marshaler):
		want = "string"
	case t.Kind() == reflect.String:
		want = "string"
	case t.Kind() == reflect.Bool:
		want = "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		want = "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		want = "number"
	case t.Kind() == reflect.Slice:
		want = "array"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		want = "object"
	default:
		c.fail(where, "no JSON type for %s", t)
		return
	}
	if len(alts) != 1 {
		c.fail(where, "%d non-null alternatives; expected one of type %s", len(alts), want)
		return
	}
	a := alts[0]
	if got := jsonType(a); got != want {
		c.fail(where, "%s is JSON %s but the schema says %v", t, want, got)
		return
	}
	switch {
	case want == "object" && t.Kind() == reflect.Struct:
		c.structure(t, a, where)
	case want == "array":
		items, ok := a["items"].(map[string]any)
		if !ok {
			c.fail(where, "an array without items")
			return
		}
		c.value(t.Elem(), items, where+"[]", false)
	}
}

// jsonType is a schema's type, or that of its const (a schema may give only the value).
func jsonType(s map[string]any) any {
	if ty, ok := s["type"]; ok {
		return ty
	}
	switch v := s["const"].(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	}
	return nil
}
