package app

import (
	"sort"

	"github.com/powercontext/powercontext/cli"
)

// Environment returns the name of every POWERCONTEXT_* environment variable the powercontext binary reads: the
// settings of `server run` (Config.settings), the database URL of `server migrate`, the listen address `server
// health` probes, and the client commands' server URL and token. Tracing reads the standard OTEL_* variables as
// well (docs/architecture.md#observability). The deployment recipes under deploy/ are tested against this list.
func Environment() []string {
	seen := map[string]bool{EnvDatabaseURL: true, EnvListen: true, cli.EnvServerURL: true, cli.EnvAuthToken: true}
	var cfg Config
	for _, s := range cfg.settings() {
		seen[s.env] = true
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
