package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/powercontext/powercontext/auth"
)

const principalExtra = "powercontext.principal"

// withPrincipal hands the principal the HTTP layer authenticated (auth.FromContext) to the SDK as its TokenInfo:
// tool calls then see it in req.Extra, and a stateful session is bound to the principal that opened it (the SDK
// answers another principal's use of the session id 403). Without a principal (no auth configured) the request
// passes unchanged.
func withPrincipal(next http.Handler) http.Handler {
	verify := func(ctx context.Context, _ string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		p := auth.FromContext(ctx)
		if p == nil {
			return nil, sdkauth.ErrInvalidToken
		}
		// The token was checked by the HTTP layer; the expiry only satisfies the SDK's check, which compares it with
		// its own time.Now (clock:process).
		return &sdkauth.TokenInfo{UserID: p.Name, Expiration: time.Now().Add(time.Hour),
			Extra: map[string]any{principalExtra: p}}, nil
	}
	protected := sdkauth.RequireBearerToken(verify, nil)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth.FromContext(r.Context()) == nil {
			next.ServeHTTP(w, r)
			return
		}
		protected.ServeHTTP(w, r)
	})
}

// callerOf returns the principal of a tool call (nil without auth: every scope is allowed).
func callerOf(extra *sdk.RequestExtra) *auth.Principal {
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	p, _ := extra.TokenInfo.Extra[principalExtra].(*auth.Principal)
	return p
}

// errForbiddenScope is the tool error of a call naming a scope outside the caller's allowed prefixes (the HTTP
// API's 403 forbidden).
var errForbiddenScope = &ToolError{Code: "forbidden", Field: "scope_id", Message: "this token may not use that scope"}

// scopeGuard is a receiving middleware: a tools/call whose arguments name a "scope_id" the caller may not use is
// answered with the forbidden tool error before any tool runs, so every tool, present and future, is covered.
func scopeGuard(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		p := callerOf(call.Extra)
		if !p.Restricted() {
			return next(ctx, method, req)
		}
		var args struct {
			ScopeID *string `json:"scope_id"`
		}
		if json.Unmarshal(call.Params.Arguments, &args) == nil && args.ScopeID != nil && !p.AllowsScope(*args.ScopeID) {
			return errorResult(errForbiddenScope), nil
		}
		return next(ctx, method, req)
	}
}
