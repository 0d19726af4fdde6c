package ui

import (
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/rs/zerolog"

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
	// AuthToken, when set, is checked by /ui/login before it sets the cookie, and every page also requires the
	// token (bearer header or cookie) itself — a second check behind the server's middleware. Optional.
	AuthToken string
}

type ui struct {
	ledger    *coordinator.Ledger
	store     db.Store
	log       zerolog.Logger
	tokenHash []byte
	pages     *pages
}

// New returns the dashboard handler. It serves every path under /ui (and /ui itself); mount it there.
func New(d Deps) http.Handler {
	u := &ui{ledger: d.Ledger, store: d.Store, log: d.Logger.With().Str("component", "ui").Logger(), pages: mustParsePages()}
	if u.store == nil && u.ledger != nil {
		u.store = u.ledger.Store()
	}
	if d.AuthToken != "" {
		sum := sha256.Sum256([]byte(d.AuthToken))
		u.tokenHash = sum[:]
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

// authorized is the dashboard's own check when it knows the token: bearer header or cookie, constant time.
func (u *ui) authorized(r *http.Request) bool {
	if u.tokenHash == nil {
		return true
	}
	given := ""
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		given = strings.TrimSpace(h[7:])
	} else if tok, ok := Credential(r); ok {
		given = tok
	}
	return u.tokenMatches(given)
}

func (u *ui) tokenMatches(given string) bool {
	if given == "" {
		return false
	}
	sum := sha256.Sum256([]byte(given))
	return subtle.ConstantTimeCompare(sum[:], u.tokenHash) == 1
}

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
	if u.tokenHash != nil && !u.tokenMatches(tok) {
		u.render(w, r, http.StatusUnauthorized, "login", loginView{Message: "That token is not valid."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: tok, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
}

func (u *ui) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, LoginPath, http.StatusSeeOther)
}

// pageFunc loads one page: it returns the status, the template name and its data.
type pageFunc func(w http.ResponseWriter, r *http.Request) (status int, name string, data any)

func (u *ui) page(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !u.authorized(r) {
			u.render(w, r, http.StatusUnauthorized, "login", loginView{Message: "Sign in with the API token to use the dashboard."})
			return
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
