// Package api holds the OpenAPI 3.1 document of the HTTP API (openapi.yaml, the machine-readable form of
// docs/api.md). The server serves it as JSON at GET /openapi.json; the handler tests check that every registered
// route is in it, that every path in it is registered, and validate real responses against its schemas.
package api

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed openapi.yaml
var files embed.FS

// YAML returns the document as written.
func YAML() []byte {
	b, err := files.ReadFile("openapi.yaml")
	if err != nil {
		panic(err) // embedded at build time
	}
	return b
}

// JSON returns the document converted to JSON (keys in the YAML's order). The conversion runs once per process.
var JSON = sync.OnceValues(func() ([]byte, error) { return ToJSON(YAML()) })

// ToJSON converts one YAML document to JSON, keeping the order of mapping keys. Only the JSON-compatible subset of
// YAML is accepted: string keys, and scalars that are strings, numbers, booleans or null.
func ToJSON(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeNode(&buf, &root); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeNode(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("api: line %d: expected one document", n.Line)
		}
		return writeNode(buf, n.Content[0])
	case yaml.AliasNode:
		return writeNode(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return fmt.Errorf("api: line %d: mapping keys must be strings", k.Line)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k.Value)
			buf.WriteByte(':')
			if err := writeNode(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeNode(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	default:
		return fmt.Errorf("api: line %d: unsupported YAML node", n.Line)
	}
	return nil
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!str":
		writeString(buf, n.Value)
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return err
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return err
		}
		b, err := json.Marshal(v) // NaN and infinities fail here: JSON has no such numbers
		if err != nil {
			return fmt.Errorf("api: line %d: %w", n.Line, err)
		}
		buf.Write(b)
	default:
		return fmt.Errorf("api: line %d: unsupported scalar tag %s", n.Line, n.ShortTag())
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	buf.Write(b)
}
