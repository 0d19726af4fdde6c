package app

import (
	"slices"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/skills"
)

// WorkKinds is every work kind this binary runs, each declared by the package that owns it. Telemetry labels
// metrics by these kinds (any other kind is "other"); it is handed them here, so it imports no domain package.
func WorkKinds() []string {
	return slices.Concat(memory.WorkKinds(), experience.WorkKinds(), skills.WorkKinds(), lifecycle.WorkKinds(),
		portability.WorkKinds(), coordinator.WorkKinds())
}
