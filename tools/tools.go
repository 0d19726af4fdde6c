//go:build tools

// Package tools pins the code generators and linters the project runs, outside the service's go.mod.
package tools

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
	_ "github.com/sqlc-dev/sqlc/cmd/sqlc"
)
