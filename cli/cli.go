// Package cli is the part of the powercontext command line that talks to a running server over HTTP through the Go
// client (package client): `sources`, `memory` and `ops`. It opens no database and starts no role; the server
// commands (`server run`, `server migrate`) and the root command that joins both live in package app, the
// composition root.
//
// Every command prints human-friendly text by default and the server's JSON with --output json. A bad command line
// (a missing or malformed flag or argument) is a *UsageError, found before any request is sent; the binary exits 2
// for it and 1 for a failure reported by the server or the network.
package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Client command settings (flags win over the environment).
const (
	EnvServerURL     = "POWERCONTEXT_SERVER_URL"
	EnvAuthToken     = "POWERCONTEXT_AUTH_TOKEN"
	DefaultServerURL = "http://127.0.0.1:8080"
)

// Commands returns the command groups that talk to a running server: sources, scopes, memory and ops. Each call builds a
// fresh tree (flags are bound to the returned commands).
func Commands() []*cobra.Command {
	return []*cobra.Command{newSourcesCommand(), newScopesCommand(), newMemoryCommand(), newExperienceCommand(), newOpsCommand()}
}

// UsageError is a bad command line found before any request was sent (a missing, malformed or contradictory flag or
// argument). The powercontext binary prints it on one line and exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

func envOr(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return fallback
}
