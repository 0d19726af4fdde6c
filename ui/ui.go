package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// Names shared with the HTTP server's auth middleware.
const (
	// Prefix is where the dashboard is mounted.
	Prefix = "/ui"
	// LoginPath checks a token and sets the cookie; the auth middleware lets it through without credentials.
	LoginPath = "/ui/login"
	// CookieName holds the API token for browsers (HttpOnly, SameSite=Strict, Path=/).
	CookieName = "pc_ui_token"
	// HeaderName marks the dashboard's same-origin fetches (value "1"); with it the cookie is accepted outside /ui.
	HeaderName = "X-PowerContext-UI"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Deps is what the dashboard reads.
type Deps struct {
	Ledger *coordinator.Ledger
	// Store serves membership and the scheduler lease; defaults to Ledger.Store().
	Store  db.Store
	Logger zerolog.Logger
	// Principals are the server's tokens (docs/security.md#principals). When set, /ui/login checks the token it is
	// given, and every page requires a principal with the admin role and no scope restriction: the one the
	// server's middleware authenticated, or (a second check behind it) the page's own bearer header or cookie.
	Principals *auth.Set
	// AuthToken is a shorthand for Principals holding the single admin token.
	AuthToken string
}

type ui struct {
	ledger     *coordinator.Ledger
	store      db.Store
	log        zerolog.Logger
	principals *auth.Set
	pages      *pages
}

// New returns the dashboard handler. It serves every path under /ui (and /ui itself); mount it there.
func New(d Deps) http.Handler {
	u := &ui{ledger: d.Ledger, store: d.Store, log: d.Logger.With().Str("component", "ui").Logger(), pages: mustParsePages()}
	if u.store == nil && u.ledger != nil {
		u.store = u.ledger.Store()
	}
	if u.principals = d.Principals; u.principals.Empty() {
		u.principals = auth.AdminToken(d.AuthToken)
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", staticHandler(http.FileServerFS(static))))
	mux.HandleFunc("GET /ui/login", u.login)
	mux.HandleFunc("POST /ui/login", u.login)
	mux.HandleFunc("GET /ui/logout", u.logout)
	mux.Handle("GET /ui", u.page(u.overview))
	mux.Handle("GET /ui/{$}", u.page(u.overview))
	mux.Handle("GET /ui/operations", u.page(u.operations))
	mux.Handle("GET /ui/operations/{id}", u.page(u.operation))
	mux.Handle("GET /ui/blocked", u.page(u.blocked))
	mux.Handle("GET /ui/", u.page(func(w http.ResponseWriter, r *http.Request) (int, string, any) {
		return http.StatusNotFound, "notfound", nil
	}))
	return securityHeaders(mux)
}

// Credential returns the token a browser presents in the dashboard cookie, for the server's auth middleware: it is
// considered on /ui paths and on requests carrying "X-PowerContext-UI: 1" (the dashboard's same-origin fetches;
// a cross-site page cannot add that header without a CORS preflight). ok is false when neither applies or the
// cookie is absent or empty. The caller compares the token exactly as it compares a bearer token.
func Credential(r *http.Request) (token string, ok bool) {
	if !isUIPath(r.URL.Path) && r.Header.Get(HeaderName) != "1" {
		return "", false
	}
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return "", false
	}
	return c.Value, true
}

func isUIPath(p string) bool { return p == Prefix || strings.HasPrefix(p, Prefix+"/") }

// principal is the request's principal: the one the server's middleware authenticated, else the page's own bearer
// header or cookie checked here. nil when none is valid.
func (u *ui) principal(r *http.Request) *auth.Principal {
	if p := auth.FromContext(r.Context()); p != nil {
		return p
	}
	given := ""
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		given = strings.TrimSpace(h[7:])
	} else if tok, ok := Credential(r); ok {
		given = tok
	}
	p, _ := u.principals.Authenticate(given)
	return p
}

// dashboardPrincipal reports whether p may use the dashboard: the admin role without scope restriction (its pages
// count and list every scope's operations).
func dashboardPrincipal(p *auth.Principal) bool { return p.Admin() && !p.Restricted() }

// login sets the cookie from ?token= (GET, as a link an operator is handed once) or the form field (POST), then
// redirects to the overview without the token in the URL. Without a token it shows the sign-in form.
func (u *ui) login(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			u.render(w, r, http.StatusBadRequest, "login", loginView{Message: "The sign-in form could not be read."})
			return
		}
		tok = r.PostForm.Get("token")
	}
	if tok == "" {
		u.render(w, r, http.StatusOK, "login", loginView{})
		return
	}
	if !u.principals.Empty() {
		p, ok := u.principals.Authenticate(tok)
		if !ok {
			u.render(w, r, http.StatusUnauthorized, "login", loginView{Message: "That token is not valid."})
			return
		}
		if !dashboardPrincipal(p) {
			u.render(w, r, http.StatusForbidden, "login", loginView{Message: notAdminMessage})
			return
		}
	}
	// Secure exactly when the request came over TLS: a plain-HTTP loopback dashboard must still sign in.
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: tok, Path: "/", HttpOnly: true, //nolint:gosec // Secure follows r.TLS
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
}

func (u *ui) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, //nolint:gosec // Secure follows r.TLS
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, LoginPath, http.StatusSeeOther)
}

const notAdminMessage = "The dashboard needs a token with the admin role and no scope restriction."

// pageFunc loads one page: it returns the status, the template name and its data.
type pageFunc func(w http.ResponseWriter, r *http.Request) (status int, name string, data any)

func (u *ui) page(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !u.principals.Empty() {
			p := u.principal(r)
			if p == nil {
				u.render(w, r, http.StatusUnauthorized, "login", loginView{Message: "Sign in with the API token to use the dashboard."})
				return
			}
			if !dashboardPrincipal(p) {
				u.render(w, r, http.StatusForbidden, "error", errorView{Title: "Not allowed", Message: notAdminMessage})
				return
			}
		}
		if u.ledger == nil || u.store == nil {
			u.render(w, r, http.StatusServiceUnavailable, "error", errorView{Title: "Not available",
				Message: "The operation ledger is not available on this process."})
			return
		}
		status, name, data := fn(w, r)
		u.render(w, r, status, name, data)
	})
}

// fail logs a server-side failure by class (never its text) and returns the error page.
func (u *ui) fail(r *http.Request, err error) (int, string, any) {
	u.log.Error().Str("path_template", r.Pattern).Str("error_class", coordinator.ErrorClass(err)).Msg("dashboard page failed")
	return http.StatusInternalServerError, "error", errorView{Title: "Internal error",
		Message: "The page could not be loaded. The server log has the details."}
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
			"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

func staticHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") { // no directory listings
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// Public reports whether the server's auth middleware should let an anonymous request to path through: every
// dashboard path is, because the dashboard answers those itself — its sign-in page for pages, its stylesheet and
// script (needed by that page) for assets.
func Public(path string) bool { return isUIPath(path) }
