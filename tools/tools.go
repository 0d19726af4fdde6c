//go:build tools

// Package tools pins the code generators the project runs, outside the service's go.mod.
package tools

import _ "github.com/sqlc-dev/sqlc/cmd/sqlc"
