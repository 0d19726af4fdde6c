//go:build !linux

package main

import "syscall"

// childProcAttr has nothing to add outside Linux (the worker also stops when its stdin closes).
func childProcAttr() *syscall.SysProcAttr { return nil }
