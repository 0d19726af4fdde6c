package main

import "syscall"

// childProcAttr kills B5's worker process when this process dies.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
