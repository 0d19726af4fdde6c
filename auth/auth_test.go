package auth_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/auth"
)

var (
	tokA = strings.Repeat("a", 32)
	tokB = strings.Repeat("b", 40)
)

func digest(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

func TestParseAndAuthenticate(t *testing.T) {
	specs, err := auth.ParseTokens([]byte(`{"tokens":[
		{"name":"ops","role":"admin","token_sha256":"` + digest(tokA) + `"},
		{"name":"team-a","role":"agent","token":"` + tokB + `","scopes":["team-a/","shared"],
		 "rate_limit":{"requests":5,"window_seconds":1.5}}]}`))
	require.NoError(t, err)
	set, err := auth.NewSet(specs)
	require.NoError(t, err)
	require.Equal(t, []string{"ops", "team-a"}, set.Names())

	ops, ok := set.Authenticate(tokA)
	require.True(t, ok)
	require.Equal(t, "ops", ops.Name)
	require.True(t, ops.Admin())
	require.False(t, ops.Restricted())
	require.True(t, ops.AllowsScope("anything"))

	a, ok := set.Authenticate(tokB)
	require.True(t, ok)
	require.False(t, a.Admin())
	require.True(t, a.Restricted())
	require.Equal(t, &auth.RateLimit{Requests: 5, Window: 1500 * time.Millisecond}, a.RateLimit)
	for scope, want := range map[string]bool{"team-a/x": true, "team-a/": true, "shared": true, "shared-2": true,
		"team-ab": false, "team-b/x": false, "": false, "TEAM-A/x": false} {
		require.Equal(t, want, a.AllowsScope(scope), scope)
	}
	for _, bad := range []string{"", tokA + "x", strings.ToUpper(tokA), tokA[:31]} {
		_, ok := set.Authenticate(bad)
		require.False(t, ok, bad)
	}
	require.NotEqual(t, ops.Binding(), a.Binding())
	var nilP *auth.Principal
	require.True(t, nilP.AllowsScope("x"), "no auth configured: every scope")

	// A bare array is accepted too.
	specs, err = auth.ParseTokens([]byte(`[{"name":"x","role":"agent","token":"` + tokA + `"}]`))
	require.NoError(t, err)
	require.Len(t, specs, 1)
}

func TestRefusals(t *testing.T) {
	for name, tc := range map[string]struct{ doc, want string }{
		"unknown member":   {`[{"name":"x","role":"agent","token":"` + tokA + `","scope":["a"]}]`, `unknown field "scope"`},
		"no tokens":        {`{"toke":[]}`, "unknown field"},
		"missing array":    {`{}`, `missing "tokens" array`},
		"syntax":           {`[{"name":"x",`, "not a tokens document"},
		"two values":       {`[] []`, "more than one JSON value"},
		"short token":      {`[{"name":"x","role":"agent","token":"short"}]`, "shorter than 32 characters"},
		"space in token":   {`[{"name":"x","role":"agent","token":"` + tokA + ` x"}]`, "printable ASCII"},
		"bad role":         {`[{"name":"x","role":"root","token":"` + tokA + `"}]`, `unknown role "root"`},
		"no role":          {`[{"name":"x","token":"` + tokA + `"}]`, "role is required"},
		"bad name":         {`[{"name":"a b","role":"agent","token":"` + tokA + `"}]`, `token "a b": name must be`},
		"no token":         {`[{"name":"x","role":"agent"}]`, "is required"},
		"both":             {`[{"name":"x","role":"agent","token":"` + tokA + `","token_sha256":"` + digest(tokA) + `"}]`, "not both"},
		"bad digest":       {`[{"name":"x","role":"agent","token_sha256":"abc"}]`, "64 hex digits"},
		"empty scopes":     {`[{"name":"x","role":"agent","token":"` + tokA + `","scopes":[]}]`, `"scopes" is empty`},
		"empty prefix":     {`[{"name":"x","role":"agent","token":"` + tokA + `","scopes":[""]}]`, "scope prefix"},
		"bad rate":         {`[{"name":"x","role":"agent","token":"` + tokA + `","rate_limit":{"requests":0,"window_seconds":1}}]`, "rate_limit"},
		"duplicate name":   {`[{"name":"x","role":"agent","token":"` + tokA + `"},{"name":"x","role":"agent","token":"` + tokB + `"}]`, "used twice"},
		"duplicate token":  {`[{"name":"x","role":"agent","token":"` + tokA + `"},{"name":"y","role":"admin","token_sha256":"` + digest(tokA) + `"}]`, "configured twice"},
		"unnamed position": {`[{"role":"agent","token":"` + tokA + `"}]`, "token 1: name must be"},
		"placeholder":      {`[{"name":"x","role":"agent","token":"change-me-to-a-long-random-token"}]`, "placeholder from the deploy examples"},
		"any change-me":    {`[{"name":"x","role":"agent","token":"CHANGEME-` + tokA + `"}]`, "placeholder"},
		"placeholder hash": {`[{"name":"x","role":"agent","token_sha256":"` + digest("change-me-to-a-long-random-token") + `"}]`, "placeholder"},
	} {
		specs, err := auth.ParseTokens([]byte(tc.doc))
		if err == nil {
			_, err = auth.NewSet(specs)
		}
		require.Error(t, err, name)
		require.Contains(t, err.Error(), tc.want, name)
		require.NotContains(t, err.Error(), tokA, "%s: an error never quotes a token", name)
	}
}

func TestAdminToken(t *testing.T) {
	require.True(t, auth.AdminToken("").Empty())
	s := auth.AdminToken("tok")
	p, ok := s.Authenticate("tok")
	require.True(t, ok)
	require.Equal(t, auth.DefaultAdminName, p.Name)
	require.True(t, p.Admin())
	require.False(t, p.Restricted())
}
