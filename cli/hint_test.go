package cli

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/client"
)

// TestMakeRunHintOnlyForTheDefaultLocalURL: "start it with: make run" helps only when the command talks to the
// default local address (the one `make run` serves); a remote server gets no such hint.
func TestMakeRunHintOnlyForTheDefaultLocalURL(t *testing.T) {
	t.Setenv(EnvServerURL, "")
	for server, hint := range map[string]bool{
		"":                            true, // neither --server nor the environment: the default
		DefaultServerURL:              true,
		DefaultServerURL + "/":        true,
		"http://127.0.0.1:9090":       false,
		"https://pc.example.com":      false,
		"http://pc.internal:8080":     false,
		"http://10.1.2.3:8080/prefix": false,
	} {
		s, err := (&clientFlags{server: server, output: outputText}).connect()
		require.NoError(t, err)
		line := s.explainLine(&client.ConnectionError{URL: s.c.BaseURL(), Err: errors.New("connection refused")})
		require.Contains(t, line, "is the server running?", server)
		if hint {
			require.Contains(t, line, "(start it with: make run)", server)
		} else {
			require.NotContains(t, line, "make run", server)
		}
	}
}
