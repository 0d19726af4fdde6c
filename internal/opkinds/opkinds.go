// Package opkinds is the one table of the work kinds the Operation API shows — over HTTP (handlers), MCP
// (get_operation) and the dashboard (ui) — by their public names, in display order. A kind not listed is never shown
// (404 operation_not_found); a system kind (the deployment's own upkeep, not any scope's work) is shown to admins
// only, or on a server without principals (docs/api.md, the operation routes).
package opkinds

import (
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
)

// Kind is one shown kind: its ledger name and its public name.
type Kind struct{ Ledger, Public string }

// shown is every shown kind in display order.
var shown = []Kind{
	{memory.Kind, memory.PublicKind},
	{experience.Kind, experience.PublicKind},
	{coordinator.KindMaintenance, coordinator.PublicKindMaintenance},
	{lifecycle.KindRedact, lifecycle.PublicKindRedact},
	{memory.KindEmbed, memory.PublicKindEmbed},
	{lifecycle.KindErase, lifecycle.PublicKindErase},
	{portability.KindExport, portability.PublicKindExport},
	{portability.KindImport, portability.PublicKindImport},
}

// Public is the public name of a ledger kind; ok is false for a kind that is never shown.
func Public(ledger string) (string, bool) {
	for _, k := range shown {
		if k.Ledger == ledger {
			return k.Public, true
		}
	}
	return "", false
}

// Ledger is the ledger kind of a public name; ok is false for a name that is not one.
func Ledger(public string) (string, bool) {
	for _, k := range shown {
		if k.Public == public {
			return k.Ledger, true
		}
	}
	return "", false
}

// LedgerKinds is every shown ledger kind, in display order.
func LedgerKinds() []string {
	out := make([]string, 0, len(shown))
	for _, k := range shown {
		out = append(out, k.Ledger)
	}
	return out
}

// PublicNames is every public name, in display order.
func PublicNames() []string {
	out := make([]string, 0, len(shown))
	for _, k := range shown {
		out = append(out, k.Public)
	}
	return out
}

// System reports whether a ledger kind is a system kind, shown to admins only.
func System(ledger string) bool { return ledger == coordinator.KindMaintenance }
