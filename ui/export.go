package ui

import (
	"errors"
	"net/http"
	"strings"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/sources"
)

// exportScope is GET /ui/scopes/{scope_id}/export[?embeddings=true]: the scope's export as a download — the same
// stream as GET /v1/scopes/{scope_id}/export (portability.Service.Export, recorded as a scope_export operation
// requested by the principal), sent as an attachment. No page ever shows it; the download alone carries the content
// (docs/portability.md#dashboard-download).
//
// Who may: like the API, an admin (without scope restriction, as for every dashboard page) or a token whose scopes
// include the scope — a session (only unrestricted admins get one) or the request's own bearer token. A restricted
// token outside its scopes, or an agent token without scopes, is refused (403). Like the dashboard's forms, a
// request another site started (Sec-Fetch-Site or Origin naming another site) is refused, so no page elsewhere can
// make a signed-in browser record exports.
func (u *ui) exportScope(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet { // HEAD: a download is never started (nor recorded) without its body
		w.Header().Set("Allow", http.MethodGet)
		u.render(w, r, http.StatusMethodNotAllowed, "error", errorView{Title: "Not allowed", Message: "Use GET to download the export."})
		return
	}
	scope := r.PathValue("scope_id")
	principal := "anonymous"
	if !u.principals.Empty() {
		p, err := u.principal(r)
		if err != nil {
			status, name, data := u.fail(r, err)
			u.render(w, r, status, name, data)
			return
		}
		if p == nil {
			u.render(w, r, http.StatusUnauthorized, "login", loginView{Message: "Sign in with the API token to use the dashboard."})
			return
		}
		if !mayExport(p, scope) {
			u.render(w, r, http.StatusForbidden, "error", errorView{Title: "Not allowed",
				Message: "Exporting a scope needs the admin role or a token whose scopes include it."})
			return
		}
		principal = p.Name
	}
	if u.portability == nil || u.portability.Ledger == nil {
		u.render(w, r, http.StatusServiceUnavailable, "error", errorView{Title: "Not available",
			Message: "The operation ledger is not available on this process."})
		return
	}
	if !sameOrigin(r) {
		u.render(w, r, http.StatusForbidden, "error", errorView{Title: "Not allowed",
			Message: "The download was started from another site; nothing was exported. Use the link on the dashboard."})
		return
	}
	if sources.ValidateScope(scope) != nil {
		u.render(w, r, http.StatusUnprocessableEntity, "error", errorView{Title: "Bad request",
			Message: "scope must be 1..256 bytes of UTF-8 without NUL."})
		return
	}
	embeddings := false
	switch r.URL.Query().Get("embeddings") {
	case "", "false":
	case "true":
		embeddings = true
	default:
		u.render(w, r, http.StatusUnprocessableEntity, "error", errorView{Title: "Bad request", Message: "embeddings must be true or false."})
		return
	}
	sw := &downloadWriter{w: w, filename: exportFilename(scope)}
	item, err := u.portability.Export(r.Context(), scope, principal, embeddings, sw)
	if err != nil && sw.started {
		// The download is under way: the missing trailer tells the reader. The class only, never content.
		u.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Str("operation_id", item.WorkID).Msg("dashboard scope export ended early")
		return
	}
	switch {
	case errors.Is(err, sources.ErrScopeErasing):
		u.render(w, r, http.StatusConflict, "error", errorView{Title: "Scope being erased",
			Message: "This scope is being erased; it cannot be exported."})
	case errors.Is(err, portability.ErrRedactionPending):
		u.render(w, r, http.StatusConflict, "error", errorView{Title: "Redaction pending",
			Message: "A memory_redact operation of this scope has not finished: let the workers run it (retry it if it failed), then export again."})
	case err != nil:
		status, name, data := u.fail(r, err)
		u.render(w, r, status, name, data)
	}
}

// mayExport is the API's rule for moving a scope, on the dashboard: an admin without scope restriction, or a
// token whose scopes include the scope.
func mayExport(p *auth.Principal, scope string) bool {
	if dashboardPrincipal(p) {
		return true
	}
	return p.Restricted() && p.AllowsScope(scope)
}

// exportFilename names the download after the scope, reduced to letters, digits, '.', '_' and '-' (at most 64).
func exportFilename(scope string) string {
	var b strings.Builder
	for _, c := range scope {
		if b.Len() == 64 {
			break
		}
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	return "scope-" + strings.Trim(b.String(), ".") + ".jsonl"
}

// downloadWriter sends the download's headers with its first byte, so an error before it is still an error page.
type downloadWriter struct {
	w        http.ResponseWriter
	filename string
	started  bool
}

func (d *downloadWriter) Write(b []byte) (int, error) {
	if !d.started {
		d.started = true
		h := d.w.Header()
		h.Set("Content-Type", "application/x-ndjson")
		h.Set("Content-Disposition", `attachment; filename="`+d.filename+`"`)
		h.Set("Cache-Control", "no-store")
		d.w.WriteHeader(http.StatusOK)
	}
	return d.w.Write(b)
}
