package mcp

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPublicKinds: get_operation shows every kind the HTTP operations routes show (docs/api.md lists them for the
// kind filter of GET /v1/operations).
func TestPublicKinds(t *testing.T) {
	got := slices.Sorted(maps.Values(publicKinds))
	require.Equal(t, []string{"experience_incubation", "maintenance", "memory_embed", "memory_flush", "memory_redact",
		"scope_erase", "scope_export", "scope_import"}, got)
}
