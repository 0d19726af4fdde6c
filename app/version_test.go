package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/internal/buildinfo"
)

func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestVersionCommand(t *testing.T) {
	out, err := runRoot(t, "--version")
	require.NoError(t, err)
	require.Equal(t, "powercontext "+buildinfo.Version()+"\n", out)

	out, err = runRoot(t, "version")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "powercontext "+buildinfo.Version()+"\n"), out)
	require.Contains(t, out, "revision:")

	out, err = runRoot(t, "version", "-o", "json")
	require.NoError(t, err)
	var info buildinfo.Info
	require.NoError(t, json.Unmarshal([]byte(out), &info))
	require.Equal(t, buildinfo.Get(), info)

	_, err = runRoot(t, "version", "-o", "xml")
	var ce *ConfigError
	require.True(t, errors.As(err, &ce), "an unknown output format is a configuration error (exit 2): %v", err)
}

func TestShellCompletionIsEnabled(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		out, err := runRoot(t, "completion", shell)
		require.NoError(t, err, shell)
		require.Contains(t, out, "powercontext", shell)
	}
}

func TestMigrateStatusAndDryRunWriteNothing(t *testing.T) {
	url := "sqlite://" + t.TempDir() + "/pc.db"
	out, err := runRoot(t, "server", "migrate", "--dry-run", "--database-url", url)
	require.NoError(t, err)
	require.Contains(t, out, "would apply 20261202000000_baseline.sql\n")
	require.Contains(t, out, "dry run: nothing written")

	// Still nothing applied: --status lists every file as pending and fails (this binary cannot run yet).
	out, err = runRoot(t, "server", "migrate", "--status", "--database-url", url)
	require.Error(t, err)
	require.Contains(t, out, "current:  none\n")
	require.Contains(t, out, "pending:  20261202000000_baseline.sql\n")

	out, err = runRoot(t, "server", "migrate", "--database-url", url)
	require.NoError(t, err, out)
	out, err = runRoot(t, "server", "migrate", "--status", "--database-url", url)
	require.NoError(t, err)
	require.NotContains(t, out, "pending:")
	require.Contains(t, out, "status:   this binary can run against the database\n")
	out, err = runRoot(t, "server", "migrate", "--dry-run", "--database-url", url)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "nothing pending: sqlite schema at version "), out)

	_, err = runRoot(t, "server", "migrate", "--dry-run", "--status", "--database-url", url)
	var ce *ConfigError
	require.True(t, errors.As(err, &ce), "exclusive flags are a configuration error: %v", err)
}

func TestServerCommandsSpeakJSON(t *testing.T) {
	url := "sqlite://" + t.TempDir() + "/pc.db"
	decode := func(out string) migrateReport {
		var r migrateReport
		require.NoError(t, json.Unmarshal([]byte(out), &r), out)
		return r
	}
	out, err := runRoot(t, "server", "migrate", "--dry-run", "-o", "json", "--database-url", url)
	require.NoError(t, err)
	r := decode(out)
	require.True(t, r.DryRun)
	require.Equal(t, "", r.Current)
	require.Contains(t, r.Pending, "20261202000000_baseline.sql")

	out, err = runRoot(t, "server", "migrate", "--status", "-o", "json", "--database-url", url)
	require.Error(t, err, "behind: this binary cannot run against it yet")
	r = decode(out)
	require.NotNil(t, r.Compatible)
	require.False(t, *r.Compatible)
	require.NotEmpty(t, r.Error)

	out, err = runRoot(t, "server", "migrate", "-o", "json", "--database-url", url)
	require.NoError(t, err)
	r = decode(out)
	require.Contains(t, r.Applied, "20261202000000_baseline.sql")
	require.Equal(t, r.Applied[len(r.Applied)-1][:14], r.Current)

	out, err = runRoot(t, "server", "migrate", "--status", "-o", "json", "--database-url", url)
	require.NoError(t, err)
	r = decode(out)
	require.True(t, *r.Compatible)
	require.Empty(t, r.Pending)

	_, err = runRoot(t, "server", "health", "-o", "yaml")
	var ce *ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
}
