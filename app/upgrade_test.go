package app_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/migrate"
)

// upgradeBuilds returns two builds as two releases around the newest expand-only migration, each with its own build
// version: "new" is this source tree, embedding the migrations through that one; "old" is the release before it —
// the source tree of the commit before the one that added the migration (oldSource), so the old fleet runs code
// that never heard of what the migration adds, as a real older release does. Without git history to take it from
// (no repository, a shallow clone, a migration not committed yet), "old" is this tree with the migrations before it
// (db/migrate.EmbeddedThrough, set at link time), which holds only while this code does not use what the migration
// adds.
func upgradeBuilds(t *testing.T, engine db.Engine) (oldBin, newBin, expandVersion string) {
	t.Helper()
	dir, err := migrate.Dir(engine)
	require.NoError(t, err)
	files, err := dir.Files()
	require.NoError(t, err)
	last := -1
	for i, f := range files {
		if strings.HasPrefix(f.Desc(), migrate.ExpandPrefix) {
			last = i
		}
	}
	require.Greater(t, last, 0, "the tree has an expand migration after the baseline")
	expandVersion = files[last].Version()
	tmp := t.TempDir()
	build := func(name, src, through string) string {
		out := filepath.Join(tmp, name)
		ldflags := "-X github.com/powercontext/powercontext/app.BuildVersion=" + name
		if through != "" {
			ldflags += " -X github.com/powercontext/powercontext/db/migrate.EmbeddedThrough=" + through
		}
		cmd := exec.Command("go", "build", "-trimpath", "-o", out, "-ldflags", ldflags, "./cmd/powercontext")
		cmd.Dir = src
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
		return out
	}
	newBin = build("new", "..", expandVersion)
	if src := oldSource(t, filepath.Join("sql", "migrations", string(engine), files[last].Name()), tmp); src != "" {
		return build("old", src, ""), newBin, expandVersion
	}
	t.Logf("no git history for %s: the old build is this tree with the migrations before it", files[last].Name())
	return build("old", "..", files[last-1].Version()), newBin, expandVersion
}

// oldSource extracts into a directory under tmp the source tree of the commit before the one that added migration
// (a path from the repository root), and returns it; "" when git cannot tell.
func oldSource(t *testing.T, migration, tmp string) string {
	t.Helper()
	added, err := exec.Command("git", "-C", "..", "log", "-1", "--diff-filter=A", "--format=%H", "--", migration).Output()
	commit := strings.TrimSpace(string(added))
	if err != nil || commit == "" {
		return ""
	}
	archive := exec.Command("git", "-C", "..", "archive", "--format=tar", commit+"^")
	stdout, err := archive.StdoutPipe()
	require.NoError(t, err)
	if archive.Start() != nil {
		return ""
	}
	dst := filepath.Join(tmp, "old-src")
	r := tar.NewReader(stdout)
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		path := filepath.Join(dst, filepath.FromSlash(h.Name))
		require.True(t, strings.HasPrefix(path, dst+string(filepath.Separator)) || path == dst, "archive entry %q", h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(path, 0o755))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o600)
			require.NoError(t, err)
			_, err = io.Copy(f, r)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		case tar.TypeSymlink:
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.Symlink(h.Linkname, path))
		}
	}
	if archive.Wait() != nil { // no parent commit (a shallow clone)
		return ""
	}
	return dst
}

// entryIDsWrittenFrom is the expand migration whose release started writing Memory entry ids: the release before
// it wrote none.
const entryIDsWrittenFrom = "20261210000000"

// fleetProc is one distributed process of the upgrade test.
type fleetProc struct {
	name string
	base string
	cmd  *exec.Cmd
	done chan struct{}
	logs bytes.Buffer
}

func startProc(t *testing.T, bin, name, role, dbURL string) *fleetProc {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	p := &fleetProc{name: name, base: "http://" + addr, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "server", "run")
	p.cmd.Env = append(cleanEnv(), "POWERCONTEXT_DEPLOYMENT_MODE=distributed", "POWERCONTEXT_DEPLOYMENT_ROLE="+role,
		"POWERCONTEXT_DATABASE_URL="+dbURL, "POWERCONTEXT_HTTP_LISTEN="+addr, "POWERCONTEXT_PROVIDER_KIND=local",
		"POWERCONTEXT_MEMBER_HEARTBEAT_SECONDS=0.2", "POWERCONTEXT_MEMBER_TTL_SECONDS=3",
		"POWERCONTEXT_WORKER_POLL_SECONDS=0.05", "POWERCONTEXT_COORDINATION_SCHEDULER_LEASE_SECONDS=3",
		"POWERCONTEXT_COORDINATION_SCHEDULER_RENEW_SECONDS=0.5", "POWERCONTEXT_LOG_LEVEL=warn")
	p.cmd.Stdout, p.cmd.Stderr = &p.logs, &p.logs
	require.NoError(t, p.cmd.Start())
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.stop(t) })
	require.Eventually(t, func() bool {
		select {
		case <-p.done:
			t.Fatalf("%s exited at start: %s", name, p.logs.String())
		default:
		}
		resp, err := http.Get(p.base + "/health/live")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 20*time.Millisecond, "%s did not come up", name)
	return p
}

// stop sends SIGINT and waits for the process to end (it drains and deregisters).
func (p *fleetProc) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("%s did not stop on SIGINT", p.name)
	}
}

// readiness returns the HTTP status, the readiness status and the checks.
func (p *fleetProc) readiness() (int, string, map[string]any, error) {
	resp, err := http.Get(p.base + "/health/ready")
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string         `json:"status"`
		Checks map[string]any `json:"checks"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		return resp.StatusCode, "", nil, err
	}
	return resp.StatusCode, body.Status, body.Checks, nil
}

func migrateWith(t *testing.T, bin, dbURL string) string {
	t.Helper()
	cmd := exec.Command(bin, "server", "migrate", "--database-url", dbURL)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// watchReady samples the readiness of the given API processes until stopped and reports every answer that was not
// 200 (ready or degraded).
type watchReady struct {
	mu       sync.Mutex
	procs    map[*fleetProc]bool
	failures []string
	samples  int
	stop     chan struct{}
	done     chan struct{}
}

func newWatchReady() *watchReady {
	w := &watchReady{procs: map[*fleetProc]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			w.mu.Lock()
			for p := range w.procs {
				code, status, checks, err := p.readiness()
				w.samples++
				if err != nil || code != http.StatusOK {
					w.failures = append(w.failures, fmt.Sprintf("%s: %d %s %v %v", p.name, code, status, checks, err))
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *watchReady) set(p *fleetProc, on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if on {
		w.procs[p] = true
	} else {
		delete(w.procs, p)
	}
}

func (w *watchReady) finish() (samples int, failures []string) {
	close(w.stop)
	<-w.done
	return w.samples, w.failures
}

func flushOK(t *testing.T, api *fleetProc, scope string) {
	t.Helper()
	capture, _ := json.Marshal(map[string]any{"scope_id": scope, "content": "The rollout of " + scope + " uses an expand migration."})
	resp, err := http.Post(api.base+"/v1/sources", "application/json", bytes.NewReader(capture))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	req, _ := http.NewRequest(http.MethodPost, api.base+"/v1/memory/flush", strings.NewReader(`{"scope_id":"`+scope+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "wait=20")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
}

// TestRollingUpgradeAcrossExpandMigration runs a mixed fleet of two builds (README.md#rolling-upgrades): an old
// fleet (api, scheduler, worker) on the schema before the newest expand-only migration; the new build's
// `server migrate` applies it under the running fleet; new processes join, old ones leave. Every API replica
// answers readiness 200 throughout (degraded while the builds mix, ready before and after), flushes work through
// old and new APIs, and an old process still starts against the migrated database.
func TestRollingUpgradeAcrossExpandMigration(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		if engine == db.EngineSQLite {
			t.Skip("distributed mode needs PostgreSQL or a MySQL-mode server")
		}
		oldBin, newBin, expandVersion := upgradeBuilds(t, engine)
		dbURL := enginetest.NewDatabase(t, engine)
		require.Contains(t, migrateWith(t, oldBin, dbURL), "schema at version")

		oldAPI := startProc(t, oldBin, "old-api", "api", dbURL)
		oldSched := startProc(t, oldBin, "old-scheduler", "scheduler", dbURL)
		oldWorker := startProc(t, oldBin, "old-worker", "worker", dbURL)
		require.Eventually(t, func() bool { _, s, _, _ := oldAPI.readiness(); return s == "ready" }, 30*time.Second, 20*time.Millisecond)
		watch := newWatchReady()
		watch.set(oldAPI, true)
		flushOK(t, oldAPI, "before")

		// Expand: the new build migrates the database under the running old fleet, and the new processes join at
		// once, before the old members' next beat re-reads the schema: their advertised ranges still end before the
		// expand version, which readiness takes for stale (degraded, schema_refresh_pending), not for incompatible.
		// The old build is an earlier release, which may predate that rule and read the same window as
		// misconfigured: its API is watched again once every old member has re-advertised its range.
		out := migrateWith(t, newBin, dbURL)
		require.Contains(t, out, expandVersion)
		watch.set(oldAPI, false)
		newAPI := startProc(t, newBin, "new-api", "api", dbURL)
		watch.set(newAPI, true)
		startProc(t, newBin, "new-scheduler", "scheduler", dbURL)
		startProc(t, newBin, "new-worker", "worker", dbURL)
		sqlDB := enginetest.OpenSQLDB(t, enginetest.ParseURL(t, dbURL))
		require.Eventually(t, func() bool {
			var behind int
			err := sqlDB.QueryRow("SELECT COUNT(*) FROM pc_runtime_members WHERE schema_max < " + expandVersion).Scan(&behind)
			return err == nil && behind == 0
		}, 30*time.Second, 20*time.Millisecond, "every old member re-advertises its range after the expand migration")
		watch.set(oldAPI, true)
		require.Eventually(t, func() bool {
			_, s, c, _ := oldAPI.readiness()
			return c["schema"] == string(migrate.CompatAhead) && s == "degraded" && c["membership"] == "mixed_versions"
		}, 30*time.Second, 20*time.Millisecond, "the old fleet accepts the expanded schema at its next beat")
		flushOK(t, oldAPI, "expanded")
		require.Eventually(t, func() bool {
			_, s, c, _ := newAPI.readiness()
			return s == "degraded" && c["membership"] == "mixed_versions"
		}, 30*time.Second, 20*time.Millisecond, "a mixed fleet is degraded, not misconfigured")
		flushOK(t, newAPI, "mixed-new")
		flushOK(t, oldAPI, "mixed-old")

		// An old process still starts against the migrated database (a restart during the roll).
		again := startProc(t, oldBin, "old-worker-restarted", "worker", dbURL)
		again.stop(t)

		watch.set(oldAPI, false)
		for _, p := range []*fleetProc{oldAPI, oldSched, oldWorker} {
			p.stop(t)
		}
		require.Eventually(t, func() bool { _, s, _, _ := newAPI.readiness(); return s == "ready" }, 30*time.Second, 20*time.Millisecond,
			"the fleet is ready again once only the new build runs")
		flushOK(t, newAPI, "after")
		// The new build's next revision of old Memory gives every entry an id (docs/memory.md#entry-ids). Only the
		// release that started writing ids shows revision 1 without them: an older build is what the upgrade across
		// that migration ran; any later upgrade's old build already wrote them.
		flushOK(t, newAPI, "before")
		var withoutID [2]int
		for rev := range withoutID {
			require.NoError(t, sqlDB.QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM pc_memory_entries WHERE scope_id = 'before' "+
				"AND revision = %d AND entry_id IS NULL", rev+1)).Scan(&withoutID[rev]))
		}
		require.Zero(t, withoutID[1], "revision 2 (new build) has ids on every entry")
		if expandVersion == entryIDsWrittenFrom {
			require.Equal(t, 1, withoutID[0], "revision 1 (old build, before entry ids) has none")
		}
		samples, failures := watch.finish()
		require.Empty(t, failures, "every readiness answer during the upgrade was 200")
		require.Positive(t, samples)
		t.Logf("%d readiness samples, all 200", samples)
	})
}
