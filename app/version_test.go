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
