// Package cli is the part of the powercontext command line that talks to a running server over HTTP through the Go
// client (package client): `sources`, `memory` and `ops`. It opens no database and starts no role; the server
// commands (`server run`, `server migrate`) and the root command that joins both live in package app, the
// composition root.
//
// Every command prints human-friendly text by default and the server's JSON with --output json (and then reports
// an error as a JSON object on standard error). A bad command line (a missing or malformed flag or argument) is a
// *UsageError, found before any request is sent. Exit codes (exit.go): 0 ok, 1 other failure, 2 usage, 3 server
// unreachable, 4 a 4xx answer, 5 operation still running at --deadline.
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
	EnvCAFile        = "POWERCONTEXT_CA_FILE"
	DefaultServerURL = "http://127.0.0.1:8080"
)

// Commands returns the command groups that talk to a running server: sources, scopes, memory, experience and ops. Each call builds a
// fresh tree (flags are bound to the returned commands).
func Commands() []*cobra.Command {
	return []*cobra.Command{newSourcesCommand(), newScopesCommand(), newMemoryCommand(), newExperienceCommand(), newOpsCommand(),
		newSkillsCommand()}
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
