package coordinator

import (
	"bytes"
	"encoding/json"
)

// MaxJSONBytes bounds payload and result JSON (docs/protocol.md#tables).
const MaxJSONBytes = 16 * 1024

// CanonicalJSON returns v as compact JSON with sorted object keys. v may be raw JSON bytes (json.RawMessage or
// []byte) or any value encoding/json accepts; the result must be a JSON object of at most MaxJSONBytes.
func CanonicalJSON(v any) ([]byte, error) {
	var raw []byte
	switch t := v.(type) {
	case json.RawMessage:
		raw = t
	case []byte:
		raw = t
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, invalidArgument("json: %v", err)
		}
		raw = b
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exact while re-encoding
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, invalidArgument("json must be an object")
	}
	if dec.More() {
		return nil, invalidArgument("json must be a single object")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil { // encoding/json sorts map keys
		return nil, invalidArgument("json: %v", err)
	}
	out := bytes.TrimRight(buf.Bytes(), "\n")
	if len(out) > MaxJSONBytes {
		return nil, invalidArgument("json is %d bytes, more than %d", len(out), MaxJSONBytes)
	}
	return out, nil
}
