// Package types holds the request and response bodies of the HTTP API (the component schemas of api/openapi.yaml)
// that more than one layer uses: handlers writes them, and the MCP tools return them where their JSON shape is the
// same. It imports no package of this module, so any layer may use it; the mapping from domain values stays with
// the layer that does it. TestSchemasMatchOpenAPI checks every type here against the document.
//
// The struct tags carry jsonschema descriptions too: the MCP SDK infers a tool's output schema from its Go type.
package types

import "time"

// TimeLayout is RFC 3339 in UTC with exactly six fractional digits (2026-12-02T13:00:00.123456Z).
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// Time is a timestamp on the wire.
type Time time.Time

// MarshalJSON writes the time in the API's one timestamp format.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(TimeLayout) + `"`), nil
}
