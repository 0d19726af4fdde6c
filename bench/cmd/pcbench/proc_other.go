//go:build !linux

package main

import (
	"syscall"
	"time"

	"github.com/powercontext/powercontext/db"
)

// childProcAttr has nothing to add outside Linux (the worker also stops when its stdin closes).
func childProcAttr() *syscall.SysProcAttr { return nil }

// serverCPU is not measured outside Linux.
func serverCPU(db.Engine) (time.Duration, bool) { return 0, false }

// selfCPU is not measured outside Linux.
func selfCPU() time.Duration { return 0 }
