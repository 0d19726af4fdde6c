package deploy_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// heredoc returns the body of the first here-document of a shell script (between "<<'SQL'" or "<<SQL" and "SQL").
func heredoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)<<'?SQL'?\n(.*?)\nSQL\n`).FindSubmatch(b)
	require.NotNil(t, m, "%s has no SQL here-document", path)
	return string(m[1])
}

func statements(script string) []string {
	var out []string
	for _, s := range strings.Split(script, ";\n") {
		var kept []string
		for _, line := range strings.Split(s, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "--") {
				kept = append(kept, line)
			}
		}
		if s := strings.TrimSpace(strings.TrimSuffix(strings.Join(kept, "\n"), ";")); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func suffix(t *testing.T) string {
	b := make([]byte, 4)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

func withUser(t *testing.T, raw, user, password string) string {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	u.User = url.UserPassword(user, password)
	return u.String()
}

// TestFleetAccounts runs the compose recipes' database accounts for real: the init script's SQL creates the
// migration and application accounts on a fresh database, `server migrate` runs as the migration account, the
// application account cannot change the schema, and an api, a scheduler and a worker on the application account
// capture and flush.
func TestFleetAccounts(t *testing.T) {
	for _, engine := range []db.Engine{db.EnginePostgres, db.EngineMySQL} {
		t.Run(string(engine), func(t *testing.T) {
			raw := enginetest.NewDatabase(t, engine)
			admin := enginetest.OpenSQLDB(t, enginetest.ParseURL(t, raw))
			ctx := context.Background()
			sfx := suffix(t)
			migrator, appUser, password := "pcm_"+sfx, "pca_"+sfx, "pw-"+sfx
			var script, dbName string
			if engine == db.EnginePostgres {
				u, _ := url.Parse(raw)
				dbName = u.Query().Get("search_path")
				script = heredoc(t, "compose/postgres/init-roles.sh")
				script = strings.NewReplacer(":'migrator_pw'", "'"+password+"'", ":'app_pw'", "'"+password+"'",
					"SCHEMA public", `SCHEMA "`+dbName+`"`).Replace(script)
			} else {
				u, _ := url.Parse(raw)
				dbName = strings.TrimPrefix(u.Path, "/")
				script = heredoc(t, "compose/mariadb/init-users.sh")
				script = regexp.MustCompile(`\$\(quote "\$[A-Z_]+"\)`).ReplaceAllString(script, "'"+password+"'")
				script = strings.ReplaceAll(script, "powercontext.*", "`"+dbName+"`.*")
			}
			script = strings.NewReplacer("powercontext_migrator", migrator, "powercontext_app", appUser).Replace(script)
			for _, stmt := range statements(script) {
				_, err := admin.ExecContext(ctx, stmt)
				require.NoError(t, err, stmt)
			}
			t.Cleanup(func() {
				if engine == db.EnginePostgres {
					for _, s := range []string{"DROP OWNED BY " + migrator + " CASCADE", "DROP OWNED BY " + appUser + " CASCADE",
						"DROP ROLE " + migrator, "DROP ROLE " + appUser} {
						if _, err := admin.ExecContext(ctx, s); err != nil {
							t.Errorf("%s: %v", s, err)
						}
					}
					return
				}
				for _, u := range []string{migrator, appUser} {
					if _, err := admin.ExecContext(ctx, "DROP USER '"+u+"'@'%'"); err != nil {
						t.Errorf("drop user %s: %v", u, err)
					}
				}
			})
			migratorURL := withUser(t, raw, migrator, password)
			appURL := withUser(t, raw, appUser, password)

			// The application account cannot migrate, and cannot change the schema at all.
			var out, errb bytes.Buffer
			require.Equal(t, app.ExitFailed, app.Main(ctx, []string{"server", "migrate", "--database-url", appURL}, &out, &errb),
				"the application account must not be able to migrate: %s", out.String())
			out.Reset()
			errb.Reset()
			require.Equal(t, app.ExitOK, app.Main(ctx, []string{"server", "migrate", "--database-url", migratorURL}, &out, &errb),
				"migrate as %s: %s", migrator, errb.String())
			appDB := enginetest.OpenSQLDB(t, enginetest.ParseURL(t, appURL))
			_, err := appDB.ExecContext(ctx, "CREATE TABLE pc_not_allowed (id INT)")
			require.Error(t, err, "the application account created a table")
			_, err = appDB.ExecContext(ctx, "DROP TABLE atlas_schema_revisions")
			require.Error(t, err, "the application account dropped a table")

			// The roles run on the application account.
			base := startRole(t, appURL, app.RoleAPI)
			startRole(t, appURL, app.RoleScheduler)
			startRole(t, appURL, app.RoleWorker)
			post := func(path, body string, header ...string) (int, map[string]any) {
				req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				var m map[string]any
				require.NoError(t, json.Unmarshal(b, &m), string(b))
				return resp.StatusCode, m
			}
			code, body := post("/v1/sources", `{"scope_id":"fleet","content":"The operator runs two API replicas."}`)
			require.Equal(t, http.StatusCreated, code, "%v", body)
			code, body = post("/v1/memory/flush", `{"scope_id":"fleet"}`, "Prefer", "wait=20")
			require.Equal(t, http.StatusOK, code, "%v", body)
			require.Equal(t, "processed", body["status"])
		})
	}
}

// startRole runs one distributed role in this process until the test ends and returns its base URL.
func startRole(t *testing.T, databaseURL, role string) string {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.DatabaseURL, cfg.Mode, cfg.Role, cfg.Listen = databaseURL, app.ModeDistributed, role, "127.0.0.1:0"
	cfg.ProviderKind = "local"
	cfg.WorkerPollSeconds = 0.05
	cfg.MemberHeartbeatSeconds, cfg.MemberTTLSeconds = 0.5, 5
	cfg.SchedulerLeaseSeconds, cfg.SchedulerRenewSeconds = 3, 1
	cfg.LogLevel = "warn"
	require.NoError(t, cfg.Validate())
	ctx, cancel := context.WithCancel(context.Background())
	logs := &lockedBuffer{}
	rt, err := app.Start(ctx, cfg, logs)
	require.NoError(t, err, "start %s on the application account", role)
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, "%s: %s", role, logs.String())
		case <-time.After(60 * time.Second):
			t.Errorf("%s did not stop", role)
		}
	})
	return fmt.Sprintf("http://%s", rt.Addr())
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
