package ui

import (
	"context"
	"embed"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/skills"
)

// Names shared with the HTTP server's auth middleware.
const (
	// Prefix is where the dashboard is mounted.
	Prefix = "/ui"
	// LoginPath shows the sign-in form (GET) and exchanges a token for a session (POST); the auth middleware lets it
	// through without credentials.
	LoginPath = "/ui/login"
	// LogoutPath ends the session (POST).
	LogoutPath = "/ui/logout"
	// CookieName holds the random session id (never a token): HttpOnly, SameSite=Strict, Path=/, Max-Age the
	// session's lifetime, Secure when the request came over TLS (docs/security.md#dashboard-sessions).
	CookieName = "pc_ui_session"
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
	Store db.Store
	// OnApproved runs after a candidate is approved on the review page (experience.Reviews.OnApproved); optional.
	OnApproved func(ctx context.Context, c db.ExperienceCandidate)
	Logger     zerolog.Logger
	// Principals are the server's tokens (docs/security.md#principals). When set, POST /ui/login checks the token
	// it is given, and every page requires a principal with the admin role and no scope restriction: the one the
	// server's middleware authenticated, or (a second check behind it) the page's own bearer header or session.
	Principals *auth.Set
	// AuthToken is a shorthand for Principals holding the single admin token.
	AuthToken string
	// Sessions are the sign-ins, shared with the server's auth middleware (default: NewSessions over Store and
	// Principals with DefaultSessionTTL and no trusted proxy).
	Sessions *Sessions
	// Skills serves the Skills page and its actions, the same service as the API's skills routes (default: a
	// skills.Service over Store).
	Skills *skills.Service
	// Portability serves the scope export download, the same service as GET /v1/scopes/{id}/export (default: a
	// portability.Service over Store and Ledger).
	Portability *portability.Service
}

type ui struct {
	ledger      *coordinator.Ledger
	store       db.Store
	log         zerolog.Logger
	principals  *auth.Set
	sessions    *Sessions
	pages       *pages
	onApproved  func(ctx context.Context, c db.ExperienceCandidate)
	skills      *skills.Service
	portability *portability.Service
}

// New returns the dashboard handler. It serves every path under /ui (and /ui itself); mount it there.
func New(d Deps) http.Handler {
	u := &ui{ledger: d.Ledger, store: d.Store, log: d.Logger.With().Str("component", "ui").Logger(), pages: mustParsePages(),
		onApproved: d.OnApproved}
	if u.store == nil && u.ledger != nil {
		u.store = u.ledger.Store()
	}
	if u.principals = d.Principals; u.principals.Empty() {
		u.principals = auth.AdminToken(d.AuthToken)
	}
	if u.skills = d.Skills; u.skills == nil {
		u.skills = &skills.Service{Store: u.store}
	}
	if u.portability = d.Portability; u.portability == nil && u.ledger != nil {
		u.portability = &portability.Service{Store: u.store, Ledger: u.ledger}
	}
	if u.sessions = d.Sessions; u.sessions == nil {
		u.sessions = NewSessions(SessionConfig{Store: u.store, Principals: u.principals})
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", staticHandler(http.FileServerFS(static))))
	mux.HandleFunc("GET /ui/login", u.loginForm)
	mux.HandleFunc("POST /ui/login", u.login)
	mux.HandleFunc("POST /ui/logout", u.logout)
	mux.Handle("GET /ui", u.page(u.overview))
	mux.Handle("GET /ui/{$}", u.page(u.overview))
	mux.Handle("GET /ui/operations", u.page(u.operations))
	mux.Handle("GET /ui/operations/{id}", u.page(u.operation))
	mux.Handle("GET /ui/blocked", u.page(u.blocked))
	mux.Handle("GET /ui/experience", u.page(u.candidates))
	mux.Handle("GET /ui/experience/{id}", u.page(u.candidate))
	mux.Handle("POST /ui/experience/{id}/approve", u.action(u.review(true)))
	mux.Handle("POST /ui/experience/{id}/reject", u.action(u.review(false)))
	mux.Handle("GET /ui/skills", u.page(u.skillsPage))
	mux.Handle("POST /ui/skills/targets/{target_id}/publish", u.action(u.publication(false)))
	mux.Handle("POST /ui/skills/targets/{target_id}/unpublish", u.action(u.publication(true)))
	mux.Handle("POST /ui/skills/targets/{target_id}/revoke", u.action(u.revokeTarget))
	mux.HandleFunc("GET /ui/scopes/{scope_id}/export", u.exportScope)
	mux.Handle("GET /ui/", u.page(func(w http.ResponseWriter, r *http.Request) (int, string, any) {
		return http.StatusNotFound, "notfound", nil
	}))
	return securityHeaders(mux)
}

func isUIPath(p string) bool { return p == Prefix || strings.HasPrefix(p, Prefix+"/") }

// principal is the request's principal: the one the server's middleware authenticated, else the page's own bearer
// header or session checked here. nil when none is valid; an error when the session store cannot be read.
func (u *ui) principal(r *http.Request) (*auth.Principal, error) {
	if p := auth.FromContext(r.Context()); p != nil {
		return p, nil
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		p, _ := u.principals.Authenticate(strings.TrimSpace(h[7:]))
		return p, nil
	}
	return u.sessions.Principal(r)
}

// dashboardPrincipal reports whether p may use the dashboard: the admin role without scope restriction (its pages
// count and list every scope's operations).
func dashboardPrincipal(p *auth.Principal) bool { return p.Admin() && !p.Restricted() }

// loginForm shows the sign-in form. A token is never read from the URL (it would stay in history and logs).
func (u *ui) loginForm(w http.ResponseWriter, r *http.Request) {
	v := loginView{}
	if r.URL.Query().Has("token") {
		v.Message = "Tokens are not accepted in the address: paste the token into the form."
	}
	u.render(w, r, http.StatusOK, "login", v)
}

// login exchanges the form's token for a session (docs/security.md#dashboard-sessions) and redirects to the
// overview. Without configured tokens there is nothing to sign in to: it redirects at once.
func (u *ui) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		u.render(w, r, http.StatusForbidden, "login", loginView{Message: crossOriginMessage})
		return
	}
	if err := r.ParseForm(); err != nil {
		u.render(w, r, http.StatusBadRequest, "login", loginView{Message: "The sign-in form could not be read."})
		return
	}
	if u.principals.Empty() {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
		return
	}
	tok := r.PostForm.Get("token")
	if tok == "" {
		u.render(w, r, http.StatusUnprocessableEntity, "login", loginView{Message: "Paste the API token to sign in."})
		return
	}
	p, ok := u.principals.Authenticate(tok)
	if !ok {
		u.render(w, r, http.StatusUnauthorized, "login", loginView{Message: "That token is not valid."})
		return
	}
	if !dashboardPrincipal(p) {
		u.render(w, r, http.StatusForbidden, "login", loginView{Message: notAdminMessage})
		return
	}
	if u.store == nil {
		u.render(w, r, http.StatusServiceUnavailable, "error", errorView{Title: "Not available",
			Message: "Sign-in needs the database, which is not available on this process."})
		return
	}
	id, err := u.sessions.create(r.Context(), p)
	if err != nil {
		status, name, data := u.fail(r, err)
		u.render(w, r, status, name, data)
		return
	}
	u.sessions.setCookie(w, r, id, int(u.sessions.ttl/time.Second))
	http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
}

// logout deletes the session on the database (every replica refuses it from then on) and clears the cookie.
func (u *ui) logout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		u.render(w, r, http.StatusForbidden, "error", errorView{Title: "Not allowed", Message: crossOriginMessage})
		return
	}
	if err := u.sessions.revoke(r); err != nil {
		status, name, data := u.fail(r, err)
		u.render(w, r, status, name, data)
		return
	}
	u.sessions.setCookie(w, r, "", -1)
	http.Redirect(w, r, LoginPath, http.StatusSeeOther)
}

// sameOrigin refuses a cross-site form post (login CSRF, forced logout). A browser says in Sec-Fetch-Site whether
// the posting page was this origin; when it does, that decides. (Origin alone cannot: the dashboard's
// Referrer-Policy no-referrer makes browsers send "Origin: null" even for its own forms.) Without Sec-Fetch-Site
// (an old browser, curl) an Origin that names another host, or the opaque "null", is refused; none is allowed.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

const crossOriginMessage = "The form was posted from another site; open the dashboard and sign in from there."

const crossOriginFormMessage = "The form was posted from another site; nothing was changed. Open the page in the dashboard and use its buttons."

const notAdminMessage = "The dashboard needs a token with the admin role and no scope restriction."

// pageFunc loads one page: it returns the status, the template name and its data.
type pageFunc func(w http.ResponseWriter, r *http.Request) (status int, name string, data any)

func (u *ui) page(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !u.allowed(w, r) {
			return
		}
		status, name, data := fn(w, r)
		u.render(w, r, status, name, data)
	})
}

// action serves one of the dashboard's own forms (POST): the page's checks, then the same-origin check of the
// sign-in form (docs/security.md#dashboard-sessions) — with the SameSite=Strict session cookie, a page on another
// site can neither post with the session nor get past this. fn either renders (a name) or has already answered
// (a redirect: name "").
func (u *ui) action(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !u.allowed(w, r) {
			return
		}
		if !sameOrigin(r) {
			u.render(w, r, http.StatusForbidden, "error", errorView{Title: "Not allowed", Message: crossOriginFormMessage})
			return
		}
		if status, name, data := fn(w, r); name != "" {
			u.render(w, r, status, name, data)
		}
	})
}

// allowed answers the request itself (sign-in page, refusal, unavailable) and returns false unless its principal
// may use the dashboard and the ledger is there.
func (u *ui) allowed(w http.ResponseWriter, r *http.Request) bool {
	if !u.principals.Empty() {
		p, err := u.principal(r)
		if err != nil {
			status, name, data := u.fail(r, err)
			u.render(w, r, status, name, data)
			return false
		}
		if p == nil {
			u.render(w, r, http.StatusUnauthorized, "login", loginView{Message: "Sign in with the API token to use the dashboard."})
			return false
		}
		if !dashboardPrincipal(p) {
			u.render(w, r, http.StatusForbidden, "error", errorView{Title: "Not allowed", Message: notAdminMessage})
			return false
		}
	}
	if u.ledger == nil || u.store == nil {
		u.render(w, r, http.StatusServiceUnavailable, "error", errorView{Title: "Not available",
			Message: "The operation ledger is not available on this process."})
		return false
	}
	return true
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
