//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// buildBinary builds cmd/powercontext (with the given build tags) into dir and returns its path.
func buildBinary(t *testing.T, dir, name string, tags ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	out := filepath.Join(dir, name)
	args := []string{"build", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, "./cmd/powercontext")
	cmd := exec.Command(goBin, args...)
	cmd.Dir = ".." // the module root
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	t.Logf("built %s (tags %q) in %s", out, tags, time.Since(start).Round(time.Millisecond))
	return out
}

// freePort returns a loopback TCP port that was free a moment ago and that this test process has not handed out
// before. The kernel may give the same ephemeral port to two listens in a row once the first listener is closed, and
// two replicas given one port broke a database round: worker-2 got api-1's port, its start saw api-1 answer
// /health/live and counted it live, then it exited on the bind error and every restart did the same (80 times).
// Ports taken by other programs are still possible; fleet.start retries those on a fresh port.
func freePort(t *testing.T) int {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		issuedPorts.Lock()
		fresh := !issuedPorts.m[port]
		issuedPorts.m[port] = true
		issuedPorts.Unlock()
		if fresh {
			return port
		}
	}
}

// issuedPorts are the ports freePort has handed out in this test process.
var issuedPorts = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

// proc is one role replica. It keeps its port across restarts unless a start loses the port to another process
// (see fleet.start); every start writes a new log file.
type proc struct {
	role  string
	idx   int
	port  atomic.Int32
	env   []string // extra settings of this replica (they win over the fleet's)
	proxy *dbProxy // its database connection, when it goes through a partitionable relay

	mu      sync.Mutex
	gen     int
	cmd     *exec.Cmd
	done    chan struct{} // closed when the current process exited
	exitErr error
	paused  bool
	logPath string
	expect  bool // the harness stopped it on purpose (kill, SIGTERM)
}

func (p *proc) name() string { return fmt.Sprintf("%s-%d", p.role, p.idx) }

func (p *proc) baseURL() string { return fmt.Sprintf("http://127.0.0.1:%d", p.port.Load()) }

// pid returns the current process id (0 when not running).
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	select {
	case <-p.done:
		return 0
	default:
	}
	return p.cmd.Process.Pid
}

// fleet is the set of powercontext processes of one round.
type fleet struct {
	t      *testing.T
	bin    string
	env    []string
	logDir string

	mu    sync.Mutex
	procs []*proc
	logs  []string
}

// newFleet prepares (does not start) a fleet. env holds the POWERCONTEXT_* settings shared by every process.
func newFleet(t *testing.T, bin, logDir string, env map[string]string) *fleet {
	base := make([]string, 0, len(os.Environ())+len(env))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "POWERCONTEXT_") && !strings.HasPrefix(kv, "OTEL_") {
			base = append(base, kv)
		}
	}
	for k, v := range env {
		base = append(base, k+"="+v)
	}
	f := &fleet{t: t, bin: bin, env: base, logDir: logDir}
	t.Cleanup(f.killAll)
	return f
}

func (f *fleet) add(role string, n int) []*proc {
	var out []*proc
	for i := range n {
		p := &proc{role: role, idx: i}
		p.port.Store(int32(freePort(f.t))) //nolint:gosec // a TCP port fits in 16 bits
		f.procs = append(f.procs, p)
		out = append(out, p)
	}
	return out
}

// start starts p (a new generation) and waits until /health/live answers. A process that exits or never becomes
// live is an error (a real failure of the service under test), with one exception that belongs to the harness:
// freePort's port was only free a moment ago, so another process on the machine can bind it before p does. A start
// that exits with "address already in use" is retried on a fresh port (a few times), and the fleet follows the new
// port because every caller reads it through baseURL.
func (f *fleet) start(p *proc) error {
	var err error
	for range 4 {
		var lostPort bool
		if lostPort, err = f.startOnce(p); err == nil || !lostPort {
			return err
		}
		f.t.Logf("%s lost port %d to another process before binding it; retrying on a fresh port", p.name(), p.port.Load())
		p.port.Store(int32(freePort(f.t))) //nolint:gosec // a TCP port fits in 16 bits
	}
	return err
}

// startOnce is one attempt of start; lostPort reports an exit caused by the listen port being taken.
func (f *fleet) startOnce(p *proc) (lostPort bool, _ error) {
	p.mu.Lock()
	p.gen++
	logPath := filepath.Join(f.logDir, fmt.Sprintf("%s.%02d.log", p.name(), p.gen))
	logFile, err := os.Create(logPath)
	if err != nil {
		p.mu.Unlock()
		return false, err
	}
	f.mu.Lock()
	f.logs = append(f.logs, logPath)
	f.mu.Unlock()
	cmd := exec.Command(f.bin, "server", "run")
	cmd.Env = append(append(append([]string{}, f.env...), p.env...),
		"POWERCONTEXT_DEPLOYMENT_ROLE="+p.role,
		"POWERCONTEXT_HTTP_MAX_CONNECTIONS_PER_ADDRESS=1024", // the load generator is one address (127.0.0.1)
		"POWERCONTEXT_HTTP_LISTEN="+fmt.Sprintf("127.0.0.1:%d", p.port.Load()))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The child dies with the test process even when the test binary is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		p.mu.Unlock()
		return false, fmt.Errorf("start %s: %w", p.name(), err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.exitErr, p.paused, p.logPath, p.expect = cmd, done, nil, false, logPath, false
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(done)
	}()

	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			p.mu.Lock()
			exitErr := p.exitErr
			p.mu.Unlock()
			logged, _ := os.ReadFile(logPath) //nolint:gosec // the harness's own log file
			return bytes.Contains(logged, []byte("address already in use")),
				fmt.Errorf("%s exited during start (%v); log %s", p.name(), exitErr, logPath)
		default:
		}
		resp, err := client.Get(p.baseURL() + "/health/live")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return false, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false, fmt.Errorf("%s did not become live within 30s; log %s", p.name(), logPath)
}

// signal sends sig to the running process of p (no-op when it is not running).
func (p *proc) signal(sig syscall.Signal) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
	}
	return syscall.Kill(p.cmd.Process.Pid, sig) == nil
}

// kill SIGKILLs p and waits for it to be gone.
func (f *fleet) kill(p *proc) {
	p.mu.Lock()
	p.expect = true
	p.mu.Unlock()
	p.signal(syscall.SIGKILL)
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done != nil {
		<-done
	}
}

// pause freezes p (SIGSTOP) for d, then resumes it (SIGCONT) unless it was restarted meanwhile. It blocks for d.
func (f *fleet) pause(ctx context.Context, p *proc, d time.Duration) bool {
	p.mu.Lock()
	gen := p.gen
	p.mu.Unlock()
	if !p.signal(syscall.SIGSTOP) {
		return false
	}
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	p.mu.Lock()
	same := p.gen == gen
	p.mu.Unlock()
	if same {
		p.signal(syscall.SIGCONT)
	}
	p.mu.Lock()
	if p.gen == gen {
		p.paused = false
	}
	p.mu.Unlock()
	return true
}

// unexpectedExit reports a process that exited although the harness did not stop it, with its exit error and log.
func (p *proc) unexpectedExit() (bool, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil || p.expect {
		return false, ""
	}
	select {
	case <-p.done:
		return true, fmt.Sprintf("%s exited on its own (%v); log %s", p.name(), p.exitErr, p.logPath)
	default:
		return false, ""
	}
}

// terminate sends SIGTERM and waits up to timeout for a clean exit; it returns the exit error and how long it took.
func (f *fleet) terminate(p *proc, timeout time.Duration) (time.Duration, error) {
	p.mu.Lock()
	done := p.done
	p.expect = true
	p.mu.Unlock()
	start := time.Now()
	p.signal(syscall.SIGCONT)
	if !p.signal(syscall.SIGTERM) {
		return 0, fmt.Errorf("%s is not running", p.name())
	}
	select {
	case <-done:
	case <-time.After(timeout):
		f.kill(p)
		return time.Since(start), fmt.Errorf("%s did not exit within %s of SIGTERM; log %s", p.name(), timeout, p.logPath)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Since(start), p.exitErr
}

// stopAll resumes every paused process and SIGTERMs everything, killing what does not exit in time.
func (f *fleet) stopAll(timeout time.Duration) {
	var wg sync.WaitGroup
	for _, p := range f.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.pid() != 0 {
				_, _ = f.terminate(p, timeout)
			}
		}()
	}
	wg.Wait()
}

func (f *fleet) killAll() {
	for _, p := range f.procs {
		p.mu.Lock()
		p.expect = true
		p.mu.Unlock()
		p.signal(syscall.SIGKILL)
	}
	for _, p := range f.procs {
		p.mu.Lock()
		done := p.done
		p.mu.Unlock()
		if done != nil {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
			}
		}
	}
}

// logFiles lists every log file written so far.
func (f *fleet) logFiles() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.logs...)
}

// scanLogs counts panics and error-level log lines in every process log.
func (f *fleet) scanLogs() (panics []string, errorLines int) {
	for _, path := range f.logFiles() {
		file, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:"):
				panics = append(panics, filepath.Base(path)+": "+line)
			case strings.Contains(line, `"level":"error"`) || strings.Contains(line, `"level":"fatal"`):
				errorLines++
			}
		}
		_ = file.Close()
	}
	return panics, errorLines
}

// pidOfMember extracts the process id from a member id role/host/pid/suffix (0 when it has none).
func pidOfMember(member string) int {
	parts := strings.Split(member, "/")
	if len(parts) < 4 {
		return 0
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil {
		return 0
	}
	return pid
}
