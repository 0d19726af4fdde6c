package opkinds_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/internal/opkinds"
)

// TestKinds: the shown kinds by public name, each mapping back to its ledger kind; only maintenance is a system kind.
func TestKinds(t *testing.T) {
	require.Equal(t, []string{"memory_flush", "experience_incubation", "maintenance", "memory_redact", "memory_embed",
		"scope_erase", "scope_export", "scope_import"}, opkinds.PublicNames())
	system := 0
	for _, k := range opkinds.LedgerKinds() {
		p, ok := opkinds.Public(k)
		require.True(t, ok, k)
		back, ok := opkinds.Ledger(p)
		require.True(t, ok, p)
		require.Equal(t, k, back)
		if opkinds.System(k) {
			system++
			require.Equal(t, "maintenance", p)
		}
	}
	require.Equal(t, 1, system)
	_, ok := opkinds.Public("powercontext.unknown")
	require.False(t, ok)
	_, ok = opkinds.Ledger("nope")
	require.False(t, ok)
}
