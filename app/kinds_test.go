package app_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/skills"
)

// Every kind a worker runs is a kind telemetry labels by name (the domain packages declare them, app hands them on),
// each once: a handler added without its package's WorkKinds would be reported as "other".
func TestWorkKindsNameEveryHandlerKind(t *testing.T) {
	handlers := []coordinator.Handler{&memory.Handler{}, &memory.EmbedHandler{}, &experience.Handler{},
		coordinator.MaintenanceHandler{}, &lifecycle.RedactHandler{}, &lifecycle.EraseHandler{},
		portability.RecordHandler{RecordKind: portability.KindExport}, portability.RecordHandler{RecordKind: portability.KindImport},
		&skills.Handler{}}
	kinds := app.WorkKinds()
	require.Len(t, kinds, len(handlers))
	for _, h := range handlers {
		require.Contains(t, kinds, h.Kind())
	}
}
