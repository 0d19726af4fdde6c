//go:build linux

package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	"github.com/powercontext/powercontext/db"
)

// dbServer is a private database server of one round: its own data directory in a temporary directory, its own
// loopback port, started and killed by the harness (the shared test servers are never touched). PostgreSQL runs as
// initdb + postgres, MariaDB as mariadb-install-db + mariadbd. When the tests run as root, the server runs as the
// postgres or mysql system user (neither server runs as root).
//
// Durability settings: PostgreSQL runs with fsync=off and MariaDB with innodb_flush_log_at_trx_commit=2. Both only
// skip the flush from the operating system's page cache to the disk, which matters for a host crash, not for a killed
// server process: every write a committed transaction made is in the page cache when the process dies, and crash
// recovery replays it exactly as after a real crash of the server process.
type dbServer struct {
	t      *testing.T
	engine db.Engine
	dir    string // owned by the server's user
	data   string
	port   int
	cred   *syscall.Credential
	bins   map[string]string

	mu          sync.Mutex
	lastRefused time.Time // when the last connection attempt that failed during a start was made
	gen         int
	cmd         *exec.Cmd
	done        chan struct{}
	logPath     string
	logs        []string
}

// findBinary returns the first executable named one of names in PATH, /usr/local/bin, /usr/sbin or the newest
// /usr/lib/postgresql/*/bin.
func findBinary(names ...string) string {
	dirs := filepath.SplitList(os.Getenv("PATH"))
	dirs = append(dirs, "/usr/local/bin", "/usr/sbin", "/usr/bin")
	pg, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(pg, func(i, j int) bool { return versionOf(pg[i]) > versionOf(pg[j]) })
	dirs = append(dirs, pg...)
	for _, name := range names {
		for _, d := range dirs {
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

func versionOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// newDBServer initialises a private server of engine and starts it. It skips the test when the server binaries are
// missing (or fails it when PC_TEST_REQUIRE_ENGINES names the engine). The server is killed when the test ends.
func newDBServer(t *testing.T, engine db.Engine) *dbServer {
	t.Helper()
	return newDBServerOn(t, engine, 0)
}

// newDBServerOn is newDBServer starting on port (a free port when 0).
func newDBServerOn(t *testing.T, engine db.Engine, port int) *dbServer {
	t.Helper()
	s := &dbServer{t: t, engine: engine, bins: map[string]string{}}
	var need map[string][]string
	sysUser := ""
	switch engine {
	case db.EnginePostgres:
		need = map[string][]string{"initdb": {"initdb"}, "server": {"postgres"}}
		sysUser = "postgres"
	case db.EngineMySQL:
		need = map[string][]string{"initdb": {"mariadb-install-db", "mysql_install_db"}, "server": {"mariadbd", "mysqld"}}
		sysUser = "mysql"
	default:
		t.Fatalf("no private server for engine %s", engine)
	}
	for role, names := range need {
		if s.bins[role] = findBinary(names...); s.bins[role] == "" {
			msg := fmt.Sprintf("private %s server: none of %v found", engine, names)
			if strings.Contains(os.Getenv("PC_TEST_REQUIRE_ENGINES"), string(engine)) {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("powercontext-e2e-%s-server-*", engine))
	if err != nil {
		t.Fatal(err)
	}
	s.dir, s.data = dir, filepath.Join(dir, "data")
	if os.Geteuid() == 0 {
		u, err := user.Lookup(sysUser)
		if err != nil {
			t.Fatalf("private %s server: running as root needs the %s system user: %v", engine, sysUser, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		s.kill()
		if !t.Failed() || os.Getenv("E2E_KEEP_LOGS") == "1" {
			_ = os.RemoveAll(dir)
		} else {
			t.Logf("private %s server directory kept: %s", engine, dir)
		}
	})
	if s.port = port; port == 0 {
		s.port = freePort(t)
	}
	start := time.Now()
	if err := s.initialise(); err != nil {
		t.Fatalf("private %s server: %v", engine, err)
	}
	if err := s.firstStart(); err != nil {
		t.Fatalf("private %s server: %v", engine, err)
	}
	t.Logf("private %s server on 127.0.0.1:%d initialised and started in %s", engine, s.port, time.Since(start).Round(time.Millisecond))
	return s
}

// firstStart starts the server for the first time. freePort's port was only free a moment ago, so another process
// on the machine can bind it first: a start that exits because the address is in use, or whose port answers as
// another server, is retried on a fresh port (a few times). Restarts keep the port (the fleet's URLs name it).
func (s *dbServer) firstStart() error {
	var err error
	for range 4 {
		if err = s.start(); err == nil {
			if err = s.ownsPort(); err == nil {
				return nil
			}
			s.kill()
		}
		if !strings.Contains(strings.ToLower(err.Error()), "address already in use") {
			return err
		}
		lost := s.port
		s.port = freePort(s.t)
		s.t.Logf("private %s server lost port %d to another process; retrying on port %d", s.engine, lost, s.port)
	}
	return err
}

// ownsPort checks that the server answering on the port is this one (its data directory); a server of someone else
// that holds the port is reported as the address being in use.
func (s *dbServer) ownsPort() error {
	driver, dsn := s.adminDSN()
	conn, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	defer conn.Close()
	q := "SELECT @@datadir"
	if s.engine == db.EnginePostgres {
		q = "SHOW data_directory"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var dir string
	if err := conn.QueryRowContext(ctx, q).Scan(&dir); err != nil {
		return err
	}
	if !sameDir(dir, s.data) {
		return fmt.Errorf("port %d: address already in use by a server on %s", s.port, dir)
	}
	return nil
}

// run runs a setup command as the server's user.
func (s *dbServer) run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return nil
}

func (s *dbServer) initialise() error {
	switch s.engine {
	case db.EnginePostgres:
		return s.run(s.bins["initdb"], "-D", s.data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C")
	default:
		args := []string{"--no-defaults", "--datadir=" + s.data, "--auth-root-authentication-method=normal", "--skip-test-db"}
		if s.cred != nil {
			args = append(args, "--user=mysql")
		}
		return s.run(s.bins["initdb"], args...)
	}
}

func (s *dbServer) serverArgs() []string {
	port := strconv.Itoa(s.port)
	if s.engine == db.EnginePostgres {
		return []string{"-D", s.data, "-p", port, "-k", s.dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
			"-c", "max_connections=200", "-c", "shared_buffers=64MB", "-c", "log_min_messages=warning"}
	}
	args := []string{"--no-defaults", "--datadir=" + s.data, "--port=" + port, "--bind-address=127.0.0.1",
		"--socket=" + filepath.Join(s.dir, "mysqld.sock"), "--pid-file=" + filepath.Join(s.dir, "mysqld.pid"),
		"--skip-name-resolve", "--skip-log-bin", "--innodb-buffer-pool-size=128M", "--innodb-flush-log-at-trx-commit=2",
		"--max-connections=300"}
	if s.cred != nil {
		args = append(args, "--user=mysql")
	}
	return args
}

// start starts the server (a new generation, its own log file) and waits until it accepts connections; crash
// recovery after a kill happens here.
// start starts the server and waits until it accepts connections. PostgreSQL backends put themselves in sessions
// of their own, so killing the postmaster's group leaves them running until they notice the postmaster is gone; a
// restart before the last one exits is refused ("pre-existing shared memory block ... is still in use"), as it
// would be for an operator. Like an operator (or a service manager), start then tries again, for up to a minute.
func (s *dbServer) start() error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := s.startOnce()
		if err == nil || !strings.Contains(err.Error(), "pre-existing shared memory block") || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (s *dbServer) startOnce() error {
	s.mu.Lock()
	s.gen++
	logPath := filepath.Join(s.dir, fmt.Sprintf("server.%02d.log", s.gen))
	logFile, err := os.Create(logPath)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if s.cred != nil {
		_ = logFile.Chown(int(s.cred.Uid), int(s.cred.Gid))
	}
	cmd := exec.Command(s.bins["server"], s.serverArgs()...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so a kill takes the postmaster and every backend at once, as a crash of the host's
	// database process would.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		s.mu.Unlock()
		return err
	}
	done := make(chan struct{})
	s.cmd, s.done, s.logPath = cmd, done, logPath
	s.logs = append(s.logs, logPath)
	s.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(done)
	}()
	deadline := time.Now().Add(120 * time.Second)
	for {
		select {
		case <-done:
			return fmt.Errorf("%s exited during start; log %s:\n%s", filepath.Base(s.bins["server"]), logPath, tail(logPath, 20))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		tried := time.Now()
		err := s.ping(ctx)
		cancel()
		if err == nil {
			return nil
		}
		s.mu.Lock()
		s.lastRefused = tried
		s.mu.Unlock()
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting connections 120 s after start (%v); log %s", err, logPath)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// adminURL is a URL for the server's administrative database.
func (s *dbServer) adminDSN() (driver, dsn string) {
	if s.engine == db.EnginePostgres {
		return "pgx", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", s.port)
	}
	cfg := mysqldriver.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.Timeout = "root", "tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 2*time.Second
	return "mysql", cfg.FormatDSN()
}

// ping opens one fresh connection and runs SELECT 1.
func (s *dbServer) ping(ctx context.Context) error {
	driver, dsn := s.adminDSN()
	conn, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	defer conn.Close()
	var one int
	return conn.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// createDatabase creates database name and returns its URL in the service's syntax.
func (s *dbServer) createDatabase(name string) string {
	driver, dsn := s.adminDSN()
	conn, err := sql.Open(driver, dsn)
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec("CREATE DATABASE " + name); err != nil {
		s.t.Fatalf("private %s server: create database: %v", s.engine, err)
	}
	if s.engine == db.EnginePostgres {
		return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, name)
	}
	return fmt.Sprintf("mysql://root@127.0.0.1:%d/%s", s.port, name)
}

// connections counts the client connections the server holds now (the round's only clients).
func (s *dbServer) connections(ctx context.Context, sqlDB *sql.DB) (int, error) {
	var n int
	if s.engine == db.EnginePostgres {
		err := sqlDB.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'client backend'`).Scan(&n)
		return n, err
	}
	var name string
	err := sqlDB.QueryRowContext(ctx, `SHOW GLOBAL STATUS LIKE 'Threads_connected'`).Scan(&name, &n)
	return n, err
}

// refusedAt returns when the server last refused a connection attempt of start (it was certainly down then).
func (s *dbServer) refusedAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastRefused
}

func (s *dbServer) current() (*exec.Cmd, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd, s.done
}

// kill SIGKILLs the server's process group and waits until the server process is gone.
func (s *dbServer) kill() {
	cmd, done := s.current()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	s.waitGroupGone(cmd.Process.Pid)
}

// stop shuts the server down cleanly (PostgreSQL fast shutdown: open transactions are rolled back and clients are
// disconnected; MariaDB normal shutdown), killing it after 60 s.
func (s *dbServer) stop() error {
	cmd, done := s.current()
	if cmd == nil || cmd.Process == nil {
		return errors.New("not running")
	}
	sig := syscall.SIGTERM
	if s.engine == db.EnginePostgres {
		sig = syscall.SIGINT
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
		s.waitGroupGone(cmd.Process.Pid)
		return nil
	case <-time.After(60 * time.Second):
		s.kill()
		return errors.New("did not shut down within 60 s; killed")
	}
}

// waitGroupGone waits (up to 10 s) until no process of group pgid is left: the PostgreSQL backends of a killed
// postmaster are in the same group and were killed with it, but they must be reaped before a restart can take the
// shared memory.
func (s *dbServer) waitGroupGone(pgid int) {
	for range 400 {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// sameDir tells whether two paths name the same directory (symbolic links resolved).
func sameDir(a, b string) bool {
	resolve := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	return resolve(a) == resolve(b)
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
