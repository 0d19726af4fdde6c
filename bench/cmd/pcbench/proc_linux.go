package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/powercontext/powercontext/db"
)

// childProcAttr kills B5's worker process when this process dies.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// userHZ is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100 on every Linux build this runs on).
const userHZ = 100

// serverCPU is the CPU time (user + system) every process of engine's server has used so far, read from
// /proc/<pid>/stat (PostgreSQL: every "postgres" process, the postmaster and its backends; MariaDB: "mariadbd" or
// "mysqld"). ok is false when nothing was found (another machine or engine).
func serverCPU(engine db.Engine) (cpu time.Duration, ok bool) {
	names := map[db.Engine][]string{db.EnginePostgres: {"postgres"}, db.EngineMySQL: {"mariadbd", "mysqld"}}[engine]
	if len(names) == 0 {
		return 0, false
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited
		}
		open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || closing < open {
			continue
		}
		comm := string(b[open+1 : closing])
		match := false
		for _, n := range names {
			match = match || comm == n
		}
		if !match {
			continue
		}
		// After ") ": state(3) ppid … utime(14) stime(15) cutime(16) cstime(17), numbered from 1 as in proc(5).
		// cutime and cstime are the exited children the process waited for: a PostgreSQL backend that ends during
		// the run is counted there, by the postmaster.
		f := bytes.Fields(b[closing+1:])
		if len(f) < 15 {
			continue
		}
		for _, field := range f[11:15] {
			v, err := strconv.ParseInt(string(field), 10, 64)
			if err != nil {
				continue
			}
			ticks += v
		}
		ok = true
	}
	return time.Duration(ticks) * time.Second / userHZ, ok
}

// selfCPU is this process's CPU time (user + system) so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
